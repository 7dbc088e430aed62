package ingest

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxURLLen bounds a stored media URL.
const maxURLLen = 2048

// checkURL accepts what clients may be handed as a media URL (images,
// floorplans, documents, videos, links, agents' photos): an absolute http
// or https URL with a host and no user info. A feed's javascript:, data:,
// vbscript: or file: URL, a bare file name (REAXML's file attribute names
// a file shipped beside the feed, which Listgate does not host) or a
// relative path is refused.
func checkURL(s string) error {
	if len(s) > maxURLLen {
		return fmt.Errorf("longer than %d characters", maxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	switch {
	case u.Scheme == "":
		return errors.New("not an absolute URL")
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		return fmt.Errorf("scheme %s is not http or https", cut(u.Scheme, 20))
	case u.Opaque != "" || u.Hostname() == "":
		return errors.New("no host")
	case u.User != nil:
		return errors.New("carries user info")
	}
	return nil
}

// skips collects the parts of one listing the ingest left out, each as
// "what: why", for the import's errors.
type skips []string

// url reports whether raw is a servable URL (checkURL); if it is not, it
// notes what was skipped.
func (s *skips) url(what, raw string) bool {
	err := checkURL(raw)
	if err != nil {
		*s = append(*s, fmt.Sprintf("%s %q: %v", what, cut(raw, 60), err))
	}
	return err == nil
}

// message is the listing's error message, or "" when nothing was skipped.
func (s skips) message() string {
	if len(s) == 0 {
		return ""
	}
	const most = 5
	msg := "listing imported without " + strings.Join(s[:min(len(s), most)], "; ")
	if len(s) > most {
		msg += fmt.Sprintf("; and %d more", len(s)-most)
	}
	return msg
}

// cut bounds a feed's string echoed in a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
