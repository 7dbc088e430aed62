package pairing

import (
	"context"
	"crypto/subtle"
	"time"
)

// Actor is who enters a user code.
type Actor struct {
	// Account is the signed-in dashboard account; "" for an operator at
	// the CLI.
	Account string
	// IP is the dashboard request's client address; "" for the CLI.
	IP string
}

func (a Actor) name() string {
	if a.Account != "" {
		return a.Account
	}
	return "operator"
}

// Approve approves the pairing whose user code is userCode for siteID; the
// plugin gets its key at its next poll. userCode is read as
// NormalizeUserCode does. It returns the pairing, approved.
//
// Errors: ErrMalformedUserCode or ErrNotFound for a wrong code (which
// counts against the actor's limits and, when it shares its first group
// with a live code, against that code: the MaxWrongEntries-th kills it);
// *RateLimitError when the actor has entered too many wrong codes;
// ErrExpired, ErrDecided; ErrUnknownSite; or the store's.
func (s *Service) Approve(ctx context.Context, userCode, siteID string, by Actor) (Pairing, error) {
	return s.decide(ctx, userCode, siteID, by)
}

// Deny denies the pairing whose user code is userCode: the plugin's next
// poll gets access_denied. Errors as Approve's, less ErrUnknownSite.
func (s *Service) Deny(ctx context.Context, userCode string, by Actor) (Pairing, error) {
	return s.decide(ctx, userCode, "", by)
}

// decide approves for siteID, or denies when siteID is "".
func (s *Service) decide(ctx context.Context, userCode, siteID string, by Actor) (Pairing, error) {
	now := s.cfg.Now()
	if err := s.entryAllowed(by, now); err != nil {
		return Pairing{}, err
	}
	norm, err := NormalizeUserCode(userCode)
	if err != nil {
		s.wrongEntry(by, now)
		return Pairing{}, err
	}
	full := HashCode(norm)
	var decided Pairing
	var wrong bool
	err = s.cfg.Store.InTx(ctx, func(tx Tx) error {
		decided, wrong = Pairing{}, false
		if siteID != "" {
			if err := tx.CheckSite(ctx, siteID); err != nil {
				return err
			}
		}
		// Codes that expired a little while ago are candidates too, so
		// that a late entry is told "expired" rather than "wrong".
		cands, err := tx.ByUserGroup(ctx, userCodeGroupHash(norm), now.Add(-s.cfg.ExpiresIn))
		if err != nil {
			return err
		}
		match := matchCode(cands, full, now)
		if match == nil {
			wrong = true
			for _, c := range cands {
				if c.WrongEntry(s.cfg.MaxWrongEntries, now) {
					if err := tx.Save(ctx, c); err != nil {
						return err
					}
				}
			}
			return nil // the counts are kept
		}
		if siteID != "" {
			err = match.Approve(siteID, by.name(), now)
		} else {
			err = match.Deny(by.name(), now)
		}
		if err != nil {
			return err
		}
		decided = *match
		return tx.Save(ctx, match)
	})
	if err != nil {
		return Pairing{}, err
	}
	if wrong {
		s.wrongEntry(by, now)
		return Pairing{}, ErrNotFound
	}
	s.log.InfoContext(ctx, "pairing "+string(decided.Status), "pairing_id", decided.ID, "site_id", decided.SiteID,
		"home_url", decided.HomeURL, "by", decided.DecidedBy)
	return decided, nil
}

// matchCode returns the candidate whose user code hashes to full,
// preferring a pending one (an old pairing may have had the same code), or
// nil. Hashes are compared in constant time.
func matchCode(cands []*Pairing, full [32]byte, now time.Time) *Pairing {
	var match *Pairing
	for _, c := range cands {
		if subtle.ConstantTimeCompare(c.UserCodeHash[:], full[:]) == 1 &&
			(match == nil || c.Effective(now) == StatusPending) {
			match = c
		}
	}
	return match
}

// entryAllowed checks the actor's wrong-entry limits.
func (s *Service) entryAllowed(by Actor, now time.Time) error {
	for _, l := range []struct {
		key string
		lim Limiter
	}{{by.IP, s.cfg.WrongEntriesPerIP}, {by.Account, s.cfg.WrongEntriesPerAccount}} {
		if l.key == "" {
			continue
		}
		if ok, wait := l.lim.Allow(l.key, now); !ok {
			return &RateLimitError{What: "entry", RetryAfter: wait}
		}
	}
	return nil
}

// wrongEntry counts a wrong code against the actor.
func (s *Service) wrongEntry(by Actor, now time.Time) {
	if by.IP != "" {
		s.cfg.WrongEntriesPerIP.Add(by.IP, now)
	}
	if by.Account != "" {
		s.cfg.WrongEntriesPerAccount.Add(by.Account, now)
	}
}
