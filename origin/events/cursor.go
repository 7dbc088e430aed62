package events

import "time"

// maxForgiven bounds the ids a cursor remembers having given up on.
const maxForgiven = 10000

// forgivenFor is how long a given-up id is watched for a late commit.
const forgivenFor = time.Hour

// cursor is the hub's reading position, owned by the listen loop.
type cursor struct {
	started bool
	// last: every id at or below it is final (or given up on) and was
	// published.
	last int64
	// A pending gap: the ids between last and the next visible row may
	// belong to transactions still running. They are final once the
	// snapshot's xmin reaches gapHorizon (the xmax of the snapshot that
	// showed the gap), for ids up to gapUpTo (the highest id that snapshot
	// showed). gapHorizon 0: none pending. gapSince is when it was seen.
	gapHorizon, gapUpTo int64
	gapSince            time.Time
	// forgiven are ids of gaps given up on after the gap timeout (a
	// transaction older than the gap still ran). Should one of them commit
	// after all, streams missed it and must reset.
	forgiven []forgivenID
}

type forgivenID struct {
	id int64
	at time.Time
}

func (c *cursor) gapPending() bool { return c.gapHorizon != 0 }

// accept takes the ids a read returned (ascending, all above last) with the
// read's snapshot bounds, and returns how many of them, from the first, are
// final and may be published; it advances last past them.
//
// An id is final once every lower id is final: the next id is final when
// it is visible and contiguous, or when the ids skipped before it are known
// never to commit. A transaction holding a skipped id took its transaction
// id before its event id (migration 0003), hence before the visible higher
// id was allocated and committed: it was in progress in the snapshot that
// showed the gap. Once the xmin of a later snapshot has passed that
// snapshot's xmax, it has ended, and what it wrote is visible or never
// will be.
//
// A gap still unresolved after timeout (some transaction of that snapshot,
// perhaps one that wrote no event, is still open) is given up on, so that
// one long transaction cannot hold the stream: its ids are remembered in
// forgiven.
func (c *cursor) accept(ids []int64, xmin, xmax int64, now time.Time, timeout time.Duration) int {
	for i, id := range ids {
		if id != c.last+1 {
			pending := c.gapPending()
			resolved := pending && xmin >= c.gapHorizon
			forced := pending && !resolved && now.Sub(c.gapSince) >= timeout
			if !(resolved || forced) || id-1 > c.gapUpTo {
				if !pending || resolved || forced {
					c.gapHorizon, c.gapUpTo, c.gapSince = xmax, ids[len(ids)-1], now
				}
				return i
			}
			if forced {
				c.forgive(c.last+1, id-1, now)
			}
		}
		c.last = id
		if c.gapPending() && c.last >= c.gapUpTo {
			c.gapHorizon, c.gapUpTo = 0, 0
		}
	}
	return len(ids)
}

// forgive remembers the ids lo..hi as given up on, keeping the newest
// maxForgiven.
func (c *cursor) forgive(lo, hi int64, now time.Time) {
	lo = max(lo, hi-maxForgiven+1)
	for id := lo; id <= hi; id++ {
		c.forgiven = append(c.forgiven, forgivenID{id, now})
	}
	if over := len(c.forgiven) - maxForgiven; over > 0 {
		c.forgiven = append(c.forgiven[:0], c.forgiven[over:]...)
	}
}

// watched returns the forgiven ids still worth watching, dropping the
// expired ones.
func (c *cursor) watched(now time.Time) []int64 {
	keep := c.forgiven[:0]
	var ids []int64
	for _, f := range c.forgiven {
		if now.Sub(f.at) < forgivenFor {
			keep = append(keep, f)
			ids = append(ids, f.id)
		}
	}
	c.forgiven = keep
	return ids
}

// unforgive drops ids from the watch list.
func (c *cursor) unforgive(ids []int64) {
	drop := map[int64]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	keep := c.forgiven[:0]
	for _, f := range c.forgiven {
		if !drop[f.id] {
			keep = append(keep, f)
		}
	}
	c.forgiven = keep
}
