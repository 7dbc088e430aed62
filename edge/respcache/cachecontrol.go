package respcache

import (
	"bytes"
	"time"
)

// CacheControl is what the cache reads of a Cache-Control header.
type CacheControl struct {
	MaxAge, SWR, SIE time.Duration
	NoStore          bool
}

// ParseCacheControl reads max-age, stale-while-revalidate, stale-if-error,
// no-store and no-cache (treated as no-store) from a header value.
func ParseCacheControl(h []byte) CacheControl {
	var cc CacheControl
	for len(h) > 0 {
		var d []byte
		if i := bytes.IndexByte(h, ','); i >= 0 {
			d, h = h[:i], h[i+1:]
		} else {
			d, h = h, nil
		}
		d = bytes.TrimSpace(d)
		name, val, _ := bytes.Cut(d, []byte("="))
		switch string(bytes.ToLower(name)) {
		case "max-age":
			cc.MaxAge = seconds(val)
		case "stale-while-revalidate":
			cc.SWR = seconds(val)
		case "stale-if-error":
			cc.SIE = seconds(val)
		case "no-store", "no-cache":
			cc.NoStore = true
		}
	}
	return cc
}

func seconds(b []byte) time.Duration {
	b = bytes.Trim(b, `"`)
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1e8 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return time.Duration(n) * time.Second
}
