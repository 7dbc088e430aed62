package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/apierror"
)

// The pairing page is the verification_uri the pairing flow advertises
// (pairing.VerificationPath). GET shows the requesting home_url of a user
// code and a picker of the account's sites; POST approves or denies through
// the pairing service. A code that names no pending pairing counts against
// the same per-IP and per-account limits as a wrong code entered on POST.

// actor is who enters a code on this request.
func (h *Handler) actor(r *http.Request, s *store.Session) pairing.Actor {
	return pairing.Actor{Account: s.User.AccountID, IP: h.cfg.ClientIP(r)}
}

// entryAllowed checks the actor's wrong-entry limits; a problem to show
// when they are spent.
func (h *Handler) entryAllowed(by pairing.Actor, now time.Time) string {
	for _, l := range []struct {
		key string
		lim pairing.Limiter
	}{{by.IP, h.cfg.EntriesPerIP}, {by.Account, h.cfg.EntriesPerAccount}} {
		if ok, wait := l.lim.Allow(l.key, now); !ok {
			return fmt.Sprintf("Too many wrong codes. Try again in %d minutes.", int(wait.Minutes())+1)
		}
	}
	return ""
}

func (h *Handler) wrongEntry(by pairing.Actor, now time.Time) {
	h.cfg.EntriesPerIP.Add(by.IP, now)
	h.cfg.EntriesPerAccount.Add(by.Account, now)
}

func (h *Handler) pairingForm(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	code := r.URL.Query().Get("user_code")
	if code == "" {
		return h.renderPairing(w, r, s, http.StatusOK, "", nil, "")
	}
	by, now := h.actor(r, s), h.cfg.Now()
	if problem := h.entryAllowed(by, now); problem != "" {
		return h.renderPairing(w, r, s, http.StatusTooManyRequests, code, nil, problem)
	}
	norm, err := pairing.NormalizeUserCode(code)
	if err != nil {
		h.wrongEntry(by, now)
		return h.renderPairing(w, r, s, http.StatusUnprocessableEntity, code, nil,
			"That is not a pairing code: it is 8 letters, as XXXX-XXXX.")
	}
	p, err := h.db.PendingPairingByUserCode(r.Context(), pairing.HashCode(norm), now)
	if apierror.CodeOf(err) == apierror.CodeNotFound {
		h.wrongEntry(by, now)
		return h.renderPairing(w, r, s, http.StatusNotFound, norm, nil,
			"No pairing is waiting for this code. Check it, or start pairing again in WordPress.")
	}
	if err != nil {
		return err
	}
	return h.renderPairing(w, r, s, http.StatusOK, norm, &p, "")
}

func (h *Handler) renderPairing(w http.ResponseWriter, r *http.Request, s *store.Session, status int,
	code string, p *store.PendingPairing, problem string) error {
	data := h.base(s)
	data["Title"] = "Connect a WordPress site"
	data["Code"] = code
	data["Pending"] = p
	data["Problem"] = problem
	if p != nil {
		sites, err := h.db.AccountSites(r.Context(), s.User.AccountID)
		if err != nil {
			return err
		}
		data["Sites"] = sites
	}
	return h.render(w, status, "pairing.html", data)
}

func (h *Handler) decidePairing(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	code := r.PostForm.Get("user_code")
	approve := r.PostForm.Get("decision") == "approve"
	var site store.Site
	if approve {
		var err error
		if site, err = h.db.AccountSite(r.Context(), s.User.AccountID, r.PostForm.Get("site")); err != nil {
			return err // another account's site, or none: 404
		}
	}
	by := h.actor(r, s)
	var p pairing.Pairing
	var err error
	if approve {
		p, err = h.cfg.Pairing.Approve(r.Context(), code, site.ID, by)
	} else {
		p, err = h.cfg.Pairing.Deny(r.Context(), code, by)
	}
	if err != nil {
		status, problem := pairingProblem(err)
		if status == 0 {
			return err
		}
		return h.renderPairing(w, r, s, status, code, nil, problem)
	}
	data := h.base(s)
	data["Title"] = "Connect a WordPress site"
	data["Decided"] = p
	data["Approved"] = approve
	data["Site"] = site
	return h.render(w, http.StatusOK, "pairing_done.html", data)
}

// pairingProblem words the pairing service's errors; status 0 for an
// error of the server.
func pairingProblem(err error) (int, string) {
	var rl *pairing.RateLimitError
	switch {
	case errors.As(err, &rl):
		return http.StatusTooManyRequests, fmt.Sprintf("Too many wrong codes. Try again in %d minutes.", int(rl.RetryAfter.Minutes())+1)
	case errors.Is(err, pairing.ErrMalformedUserCode):
		return http.StatusUnprocessableEntity, "That is not a pairing code: it is 8 letters, as XXXX-XXXX."
	case errors.Is(err, pairing.ErrNotFound):
		return http.StatusNotFound, "No pairing is waiting for this code. Check it, or start pairing again in WordPress."
	case errors.Is(err, pairing.ErrExpired):
		return http.StatusGone, "This code has expired. Start pairing again in WordPress."
	case errors.Is(err, pairing.ErrDecided):
		return http.StatusConflict, "This code was already approved or denied."
	case errors.Is(err, pairing.ErrUnknownSite):
		return http.StatusNotFound, "Site not found."
	}
	return 0, ""
}

func (h *Handler) pairings(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ps, err := h.cfg.Pairing.List(r.Context(), site.ID)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "WordPress sites · " + site.Name
	data["Site"] = site
	data["Pairings"] = ps
	data["Notice"] = notice(r)
	return h.render(w, http.StatusOK, "pairings.html", data)
}

func (h *Handler) disconnectPairing(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	_, err = h.cfg.Pairing.DisconnectPairing(r.Context(), site.ID, r.PathValue("pairing"))
	switch {
	case errors.Is(err, pairing.ErrNotFound):
		return errNotFound()
	case errors.Is(err, pairing.ErrNotConnected):
		return &pageError{http.StatusConflict, "This WordPress site is not connected: it has no key to revoke."}
	case err != nil:
		return err
	}
	redirect(w, r, Prefix+"/sites/"+site.ID+"/pairings", "disconnected")
	return nil
}
