package views

import (
	"bytes"
	"hash/maphash"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/listgate/listgate/edge/clientaddr"
)

// set64 is an open-addressing set of 64-bit hashes (0 is the empty slot,
// so a hash of 0 is stored as 1). Its owner locks it.
type set64 struct {
	slots []uint64
	n     int
}

type addResult uint8

const (
	seen addResult = iota
	added
	full
)

// add inserts h unless present; total counts the hashes of every set,
// which may not pass max, and site those of the visitor's site and day,
// which may not pass siteMax.
func (s *set64) add(h uint64, total *atomic.Int64, max int64, site *atomic.Int32, siteMax int32) addResult {
	if h == 0 {
		h = 1
	}
	if s.slots == nil {
		s.slots = make([]uint64, 64)
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return seen
		case 0:
			if total.Add(1) > max {
				total.Add(-1)
				return full
			}
			if site.Add(1) > siteMax {
				site.Add(-1)
				total.Add(-1)
				return full
			}
			s.slots[i] = h
			s.n++
			if s.n*4 > len(s.slots)*3 {
				s.grow()
			}
			return added
		}
	}
}

func (s *set64) grow() {
	old := s.slots
	s.slots = make([]uint64, len(old)*2)
	mask := uint64(len(s.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}

// clientSlots is the size of the per-client table: 2^16 counters, 512 KiB.
// Two addresses sharing a slot share its limit; with a limit of 60 a
// minute and a few beacons a visitor, that takes many thousands of
// addresses active in one minute.
const clientSlots = 1 << 16

// clientTable counts beacons per client address and minute in a fixed
// array, indexed by a keyed hash of the address's group (clientaddr: an
// IPv6 address by its /64, which one client usually holds whole).
type clientTable struct {
	seed  maphash.Seed
	slots []atomic.Uint64 // minute << 24 | count
}

func (t *clientTable) init() {
	t.seed = maphash.MakeSeed()
	t.slots = make([]atomic.Uint64, clientSlots)
}

// allow counts a beacon of client at now and reports whether it is within
// limit for the minute.
func (t *clientTable) allow(client netip.Addr, now time.Time, limit int) bool {
	var buf [8]byte
	slot := &t.slots[maphash.Bytes(t.seed, clientaddr.AppendGroup(buf[:0], client))%clientSlots]
	minute := uint64(now.Unix() / 60)
	for {
		old := slot.Load()
		next := minute<<24 | 1
		if old>>24 == minute {
			if int(old&(1<<24-1)) >= limit {
				return false
			}
			next = old + 1
		}
		if slot.CompareAndSwap(old, next) {
			return true
		}
	}
}

// botMarks are lower-case fragments of the User-Agents of crawlers,
// preview fetchers, monitors and HTTP libraries. A browser's does not
// contain them. (HeadlessChrome is not among them: it is what a real
// browser automation test drives, and a crawler using it usually says
// more, such as "bot".)
var botMarks = [][]byte{
	[]byte("bot"), []byte("crawl"), []byte("spider"), []byte("slurp"), []byte("facebookexternalhit"),
	[]byte("facebookcatalog"), []byte("embedly"), []byte("preview"), []byte("lighthouse"), []byte("pagespeed"),
	[]byte("pingdom"), []byte("uptime"), []byte("monitor"), []byte("feedfetcher"), []byte("mediapartners"),
	[]byte("yandex"), []byte("baidu"), []byte("ahrefs"), []byte("semrush"), []byte("mj12"), []byte("archiver"),
	[]byte("curl/"), []byte("wget"), []byte("python"), []byte("go-http-client"), []byte("java/"),
	[]byte("okhttp"), []byte("axios"), []byte("node-fetch"), []byte("libwww"), []byte("httpclient"),
	[]byte("scrapy"), []byte("phantomjs"), []byte("whatsapp"), []byte("skypeuripreview"), []byte("vercel-screenshot"),
}

// IsBot reports whether a User-Agent is a known bot's, crawler's or HTTP
// library's, or empty (browsers always send one).
func IsBot(ua []byte) bool {
	if len(ua) == 0 {
		return true
	}
	var buf [512]byte
	lower := buf[:0]
	for _, c := range ua[:min(len(ua), len(buf))] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, m := range botMarks {
		if bytes.Contains(lower, m) {
			return true
		}
	}
	return false
}
