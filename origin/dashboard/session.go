package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

// Cookie names. Over HTTPS the session cookie is __Host-listgate_session
// (Secure, Path=/, no Domain: the browser ties it to this host). Over plain
// HTTP — a developer's loopback origin, the tests — a __Host- cookie cannot
// be set, so the name drops the prefix and the cookie is not Secure. A
// request only ever reads the cookie of its own scheme.
const (
	sessionCookie = "listgate_session"
	loginCookie   = "listgate_login_csrf"
	securePrefix  = "__Host-"
	csrfField     = "csrf_token"
	maxFormBytes  = 64 << 10
)

// Password lengths: bcrypt reads at most 72 bytes.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 72
)

// HashPassword validates a new password and returns its bcrypt hash.
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLen || len(password) > MaxPasswordLen {
		return "", apierror.InvalidField("password", fmt.Sprintf("must be %d to %d bytes", MinPasswordLen, MaxPasswordLen))
	}
	b, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("dashboard: hash password: %w", err)
	}
	return string(b), nil
}

// dummyHash is compared against when the e-mail is unknown, so that a
// sign-in takes as long whether the address exists or not.
var dummyHash = sync.OnceValue(func() []byte {
	b, err := bcrypt.GenerateFromPassword([]byte("not-a-password-anyone-has"), bcrypt.DefaultCost)
	if err != nil {
		panic(err)
	}
	return b
})

// isSecure reports whether the browser reached us over HTTPS: TLS at the
// origin, or the edge (a request with the internal token) saying
// X-Forwarded-Proto: https. Anyone else's X-Forwarded-Proto is ignored.
func isSecure(r *http.Request) bool {
	return r.TLS != nil ||
		api.FromEdge(r.Context()) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}

func cookieName(r *http.Request, base string) string {
	if isSecure(r) {
		return securePrefix + base
	}
	return base
}

func setCookie(w http.ResponseWriter, r *http.Request, base, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r, base), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: isSecure(r), SameSite: http.SameSiteLaxMode})
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// sessionHandler is a page or action of a signed-in user.
type sessionHandler func(w http.ResponseWriter, r *http.Request, s *store.Session) error

// public wraps a page anyone may see.
func (h *Handler) public(fn api.HandlerFunc) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		// Text no column can hold (a NUL, bytes that are not UTF-8) would
		// fail a page's query: the query and the posted form (r.PostForm,
		// the body's alone) are refused as unreadable before.
		if !api.StorableValues(r.URL.Query()) {
			h.fail(w, r, nil, &pageError{http.StatusBadRequest, "The address could not be read."})
			return nil
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil || !api.StorableValues(r.PostForm) {
				h.fail(w, r, nil, &pageError{http.StatusBadRequest, "The form could not be read."})
				return nil
			}
		}
		if err := fn(w, r); err != nil {
			h.fail(w, r, nil, err)
		}
		return nil
	}
}

// signedIn wraps a page of a signed-in user: without a live session a GET
// goes to the sign-in page and a POST is 403. A POST must carry the
// session's CSRF token, else it is 403.
func (h *Handler) signedIn(fn sessionHandler) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s, err := h.session(r)
		if err != nil && apierror.CodeOf(err) != apierror.CodeNotFound {
			h.fail(w, r, nil, err)
			return nil
		}
		if s == nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, Prefix+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return nil
			}
			h.fail(w, r, nil, errForbidden("Your session has ended. Please sign in again."))
			return nil
		}
		data := h.base(s)
		if !api.StorableValues(r.URL.Query()) {
			h.fail(w, r, data, &pageError{http.StatusBadRequest, "The address could not be read."})
			return nil
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil || !api.StorableValues(r.PostForm) {
				h.fail(w, r, data, &pageError{http.StatusBadRequest, "The form could not be read."})
				return nil
			}
			if !sameToken(r.PostForm.Get(csrfField), s.CSRFToken) {
				h.fail(w, r, data, errForbidden("This form has expired or did not come from the dashboard. Go back, reload the page and try again."))
				return nil
			}
		}
		if err := fn(w, r, s); err != nil {
			h.fail(w, r, data, err)
		}
		return nil
	}
}

// session returns the request's live session; nil and a NOT_FOUND error
// when it has none.
func (h *Handler) session(r *http.Request) (*store.Session, error) {
	c, err := r.Cookie(cookieName(r, sessionCookie))
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, apierror.NotFound("no session")
	}
	s, err := h.db.SessionByToken(r.Context(), tokenHash(c.Value), h.cfg.Now())
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// base is the data every signed-in page has.
func (h *Handler) base(s *store.Session) map[string]any {
	return map[string]any{"User": s.User, "CSRF": s.CSRFToken, "Now": h.cfg.Now()}
}

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) error {
	if s, _ := h.session(r); s != nil {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return nil
	}
	return h.renderLogin(w, r, http.StatusOK, "", "")
}

// renderLogin shows the sign-in form with a new login CSRF token.
func (h *Handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, email, problem string) error {
	token := randomToken()
	setCookie(w, r, loginCookie, token, int((30 * time.Minute).Seconds()))
	return h.render(w, status, "login.html", map[string]any{"Title": "Sign in", "CSRF": token,
		"Email": email, "Problem": problem, "Next": safeNext(r.FormValue("next"))})
}

// safeNext returns next when it is a dashboard path, else the dashboard.
func safeNext(next string) string {
	if strings.HasPrefix(next, Prefix) && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Prefix
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(cookieName(r, loginCookie))
	if err != nil || !sameToken(r.PostForm.Get(csrfField), c.Value) {
		return errForbidden("This sign-in form has expired. Go back, reload the page and try again.")
	}
	email := store.NormalizeEmail(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	ip := h.cfg.ClientIP(r)
	pair := email + "\n" + ip
	now := h.cfg.Now()
	if ok, wait := h.admitSignIn(email, ip, pair, now); !ok {
		// Refused before the password is checked: the answer is the
		// same whether it was right or not.
		h.log.InfoContext(r.Context(), "dashboard sign-in refused: too many failures", "client_ip", ip)
		w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
		return h.renderLogin(w, r, http.StatusTooManyRequests, email, tooMany(wait))
	}
	u, err := h.db.UserByEmail(r.Context(), email)
	hash := []byte(u.PasswordHash)
	if err != nil {
		if apierror.CodeOf(err) != apierror.CodeNotFound {
			return err
		}
		hash = dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || err != nil {
		h.cfg.FailedLoginsPerIP.Add(ip, now)
		h.cfg.FailedLoginsPerEmail.Add(email, now)
		h.log.InfoContext(r.Context(), "dashboard sign-in failed", "client_ip", ip)
		return h.renderLogin(w, r, http.StatusUnauthorized, email, "The e-mail address or password is wrong.")
	}
	h.cfg.SignInsPerAddress.Reset(pair)
	h.cfg.KnownAddresses.Mark(pair, now)
	token := randomToken()
	if err := h.db.CreateSession(r.Context(), tokenHash(token), u.ID, randomToken(), now.Add(h.cfg.SessionTTL)); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard sign-in", "user_id", u.ID, "account_id", u.AccountID, "client_ip", ip)
	setCookie(w, r, sessionCookie, token, int(h.cfg.SessionTTL.Seconds()))
	setCookie(w, r, loginCookie, "", -1)
	setHeaders(w)
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
	return nil
}

// admitSignIn applies the sign-in limits of an e-mail from a client address
// (pair is the two together), in this order:
//
//  1. FailedLoginsPerIP: the address's failures, whatever the e-mail;
//  2. FailedLoginsPerEmail: the e-mail's failures from every address,
//     which an address the e-mail signed in from lately (KnownAddresses)
//     passes;
//  3. SignInsPerAddress: the e-mail's attempts from this address, counted
//     here, so that attempts sent at once cannot pass together.
//
// An attacker's failures thus delay only the attacker's own address, not
// the user signing in from another. It reports how long to wait when the
// attempt may not be made.
func (h *Handler) admitSignIn(email, ip, pair string, now time.Time) (bool, time.Duration) {
	if ok, wait := h.cfg.FailedLoginsPerIP.Allow(ip, now); !ok {
		return false, wait
	}
	if ok, wait := h.cfg.FailedLoginsPerEmail.Allow(email, now); !ok && !h.cfg.KnownAddresses.Recent(pair, now) {
		return false, wait
	}
	return h.cfg.SignInsPerAddress.Attempt(pair, now)
}

// tooMany is the message of a refused sign-in: how long to wait, in whole
// seconds under a minute, else in minutes (rounded up).
func tooMany(wait time.Duration) string {
	if s := int(math.Ceil(wait.Seconds())); s < 60 {
		unit := "seconds"
		if s <= 1 {
			s, unit = 1, "second"
		}
		return fmt.Sprintf("Too many failed sign-ins. Try again in %d %s.", s, unit)
	}
	m := int(math.Ceil(wait.Minutes()))
	unit := "minutes"
	if m == 1 {
		unit = "minute"
	}
	return fmt.Sprintf("Too many failed sign-ins. Try again in %d %s.", m, unit)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	if c, err := r.Cookie(cookieName(r, sessionCookie)); err == nil {
		if err := h.db.DeleteSession(r.Context(), tokenHash(c.Value)); err != nil {
			return err
		}
	}
	setCookie(w, r, sessionCookie, "", -1)
	setHeaders(w)
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
	return nil
}
