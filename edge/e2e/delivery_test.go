package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	netmail "net/mail"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/mail/mailtest"
	"github.com/listgate/listgate/pkg/webhook"
)

// A lead sent through the edge reaches the site's webhook, signed with the
// secret `origin webhooks create` printed, and is e-mailed to the site's
// default recipient through a real SMTP server; the CLI's delivery log
// shows it delivered.
func TestLeadDelivery(t *testing.T) {
	secretKey := webhook.NewMasterKey()
	smtp := mailtest.Start(t, mailtest.Options{})
	type hook struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var hooks []hook
	arrived := make(chan struct{}, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hooks = append(hooks, hook{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(204)
		arrived <- struct{}{}
	}))
	defer recv.Close()

	s := newSystem(t, "secret_key: "+secretKey, "smtp_url: "+smtp.URL("smtp"), "webhook_allow_targets: loopback")
	edge := s.startEdge(edgeOpts{})
	site := s.site("professional")
	k := s.key(site, "leads:write")
	conn, err := pgx.Connect(context.Background(), s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE sites SET default_lead_recipient = 'office@agency.example' WHERE id = $1`, site); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LISTGATE_SECRET_KEY", secretKey) // the CLI derives the secret it shows
	t.Setenv("LISTGATE_WEBHOOK_ALLOW_TARGETS", "loopback")
	var ep struct{ ID, Secret string }
	s.cli(&ep, "webhooks", "create", "--site", site, "--url", recv.URL+"/crm", "--events", "lead.created,lead.updated", "--json")
	if ep.ID == "" || len(ep.Secret) < 20 {
		t.Fatalf("webhooks create printed %+v", ep)
	}

	r := do(t, "POST", edge.url()+"/v1/leads", []byte(`{"name":"Sam Buyer","email":"sam@example.com","message":"Is it still available?"}`),
		map[string]string{"Authorization": "Bearer " + k.Key, "Content-Type": "application/json"})
	if r.status != 201 {
		t.Fatalf("lead: %d %s", r.status, r.body)
	}
	var created struct {
		LeadID int64 `json:"lead_id"`
	}
	if err := json.Unmarshal(r.body, &created); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook within 30 s")
	}
	mu.Lock()
	h := hooks[0]
	mu.Unlock()
	if err := webhook.Verify(ep.Secret, h.header, h.body, time.Minute, time.Now()); err != nil {
		t.Errorf("the webhook does not verify with the secret the CLI printed: %v", err)
	}
	var p struct {
		Type   string `json:"type"`
		SiteID string `json:"site_id"`
		Data   struct {
			LeadID int64  `json:"lead_id"`
			Name   string `json:"name"`
		} `json:"data"`
	}
	if err := json.Unmarshal(h.body, &p); err != nil || p.Type != "lead.created" || p.SiteID != site ||
		p.Data.LeadID != created.LeadID || p.Data.Name != "Sam Buyer" {
		t.Errorf("payload %s (%v)", h.body, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := smtp.Wait(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].To[0] != "office@agency.example" || msg.Header.Get("X-Listgate-Lead-Id") != fmt.Sprint(created.LeadID) {
		t.Errorf("e-mail to %v, headers %v", msgs[0].To, msg.Header)
	}
	if a, err := netmail.ParseAddress(msg.Header.Get("Reply-To")); err != nil || a.Address != "sam@example.com" {
		t.Errorf("Reply-To %q", msg.Header.Get("Reply-To"))
	}

	// The delivery log as the CLI shows it.
	var log struct {
		Deliveries []struct {
			WebhookID string `json:"webhook_id"`
			State     string `json:"state"`
			Status    int    `json:"status"`
		} `json:"deliveries"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s.cli(&log, "webhooks", "deliveries", ep.ID, "--json")
		if len(log.Deliveries) == 1 && log.Deliveries[0].State == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery log %+v", log)
		}
	}
	if log.Deliveries[0].WebhookID != h.header.Get("webhook-id") || log.Deliveries[0].Status != 204 {
		t.Errorf("log %+v, webhook-id sent %q", log.Deliveries, h.header.Get("webhook-id"))
	}
}
