package webhook_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/listgate/listgate/pkg/webhook"
)

// The delivery worker's use: derive the endpoint's secrets (the current
// generation, and the previous one during a rotation), sign, send.
func ExampleSetHeaders() {
	master, err := webhook.ParseMasterKey(hex.EncodeToString(bytes.Repeat([]byte{7}, 32))) // LISTGATE_SECRET_KEY
	if err != nil {
		panic(err)
	}
	endpointID := "3f0c2a9e-5b1d-4c8e-9a7f-2d6b8e1c4f03"
	secrets := []string{webhook.DeriveSecret(master, endpointID, 2), webhook.DeriveSecret(master, endpointID, 1)}
	body := []byte(`{"type":"lead.created","data":{"id":17}}`)

	req, _ := http.NewRequest(http.MethodPost, "https://crm.example.com/hooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if err := webhook.SetHeaders(req.Header, secrets, "msg_1843", time.Unix(1772359200, 0), body); err != nil {
		panic(err)
	}
	fmt.Println(req.Header.Get("webhook-id"))
	fmt.Println(req.Header.Get("webhook-timestamp"))
	fmt.Println(req.Header.Get("webhook-signature"))
	// A receiver with either secret accepts it.
	fmt.Println(webhook.Verify(secrets[1], req.Header, body, 0, time.Unix(1772359230, 0)))
	// Output:
	// msg_1843
	// 1772359200
	// v1,auh5sx2mW2K3KHUQAmVEf0Fi11oqo5aa8VZso4VRPws= v1,pYBVoUMu32xZ1+X69i97uhWIgrvsnMZx1RlCHsPLQ3M=
	// <nil>
}

// The dashboard's check of a URL an agency typed in.
func ExampleCheckURL() {
	for _, raw := range []string{
		"HTTPS://CRM.Example.com:443/hooks?site=12",
		"http://169.254.169.254/latest/meta-data/",
		"https://admin:secret@crm.example.com/",
	} {
		u, err := webhook.CheckURL(raw, webhook.ClientOptions{})
		var ue *webhook.URLError
		if errors.As(err, &ue) {
			fmt.Println("refused:", ue.Reason)
			continue
		}
		fmt.Println(u)
	}
	// Output:
	// https://crm.example.com/hooks?site=12
	// refused: 169.254.169.254 is a link-local (169.254.0.0/16, where cloud metadata services answer) address; webhooks go only to public internet addresses
	// refused: the URL must not contain a user name or password (our signature authenticates each request)
}

// What a delivery attempt's answer means for the next one.
func ExampleNextAttempt() {
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := created.Add(time.Minute) // attempt 3 just got 503 with Retry-After: 120
	retryAfter, _ := webhook.ParseRetryAfter("120", now)
	next, ok := webhook.NextAttempt(created, now, 3, retryAfter)
	fmt.Println(next.Sub(now), ok)
	// Output: 2m0s true
}
