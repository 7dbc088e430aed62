package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"time"
)

// DefaultDuplicateWindow is how far back a submission is compared with
// earlier leads when no window is configured.
const DefaultDuplicateWindow = 24 * time.Hour

// Phones returns the lead's distinct E.164 numbers (phone and mobile), the
// ones duplicates are matched on: a number given as phone matches the same
// number given as mobile.
func (l *Lead) Phones() []string {
	var out []string
	for _, p := range []string{l.PhoneE164, l.MobileE164} {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// LockKeys returns the advisory-lock keys of a submission: one for each of
// its duplicate keys (site, listing or none, type, contact), where the
// contact is the normalised e-mail or an E.164 number. Two submissions that
// could be duplicates of each other share at least one key, so a writer
// that takes all its keys' locks before looking for a duplicate cannot miss
// one being created at the same moment. The keys are distinct and sorted,
// the order in which they must be locked so that two writers never wait on
// each other in a cycle.
func LockKeys(siteID string, listingRef int64, l *Lead) []int64 {
	var keys []int64
	add := func(kind, contact string) {
		h := sha256.New()
		for _, part := range []string{siteID, strconv.FormatInt(listingRef, 10), string(l.Type), kind, contact} {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		keys = append(keys, int64(binary.BigEndian.Uint64(h.Sum(nil))))
	}
	if l.EmailNorm != "" {
		add("email", l.EmailNorm)
	}
	for _, p := range l.Phones() {
		add("tel", p)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
