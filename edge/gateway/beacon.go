package gateway

import (
	"bytes"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// View beacons (POST /v1/sites/{site}/views, GET /v1/sites/{site}/views.gif):
// a site's pages report that a visitor looked at a listing. The key is the
// site's beacon id (scope views:write, public by design), in the query as
// k= (sendBeacon and <img> cannot set headers) or in the usual headers.
// The edge answers at once and counts in memory (ViewCounter); it never
// asks the origin about a beacon, but for a beacon id it has not cached
// (one introspection, as for any key). Beacons are outside the site's plan
// limit and its usage counts; one client address is capped per minute by
// the counter. Answers carry Access-Control-Allow-Origin: * (they say
// nothing, and take no credentials), so any page may send them.

// ViewCounter counts a view beacon; *views.Counter satisfies it. zone is
// the site's time zone (nil: UTC); userAgent is not retained.
type ViewCounter interface {
	CountView(site string, zone *time.Location, ref int64, client netip.Addr, userAgent []byte, prefetch bool, now time.Time)
}

// Limits of a beacon.
const (
	// beaconBodyLimit bounds a beacon's body: 1 KiB.
	beaconBodyLimit = 1 << 10
	// maxBeaconPath bounds the page path a beacon carries.
	maxBeaconPath = 512
	// maxListingRef is the largest listing_ref a beacon may name (2^53−1,
	// exact in JavaScript).
	maxListingRef = 1<<53 - 1
)

var (
	errBeaconType = apierror.UnsupportedMediaType("a beacon's body is application/json, text/plain (the JSON object) or application/x-www-form-urlencoded")
	errNoViews    = apierror.NotFound("no such path")
	// pixel is a 1×1 transparent GIF.
	pixel = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
)

// serveBeacon is the request path of a beacon route.
func (g *Gateway) serveBeacon(ctx *fasthttp.RequestCtx, rt *route, m *routeMetrics) {
	start := time.Now()
	g.requestID(ctx)
	if e := g.passBeacon(ctx, rt); e != nil {
		writeError(ctx, e)
	}
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	m.observe(ctx.Response.StatusCode(), start)
}

// passBeacon checks a beacon in DESIGN.md §2's order — body size before a
// byte of it is read, the key (header or k=), its site and scope — then
// reads and parses it, counts it and answers.
func (g *Gateway) passBeacon(ctx *fasthttp.RequestCtx, rt *route) *apierror.Error {
	if g.cfg.Views == nil {
		return errNoViews
	}
	if e := checkBodySize(ctx, rt.maxBody); e != nil {
		return e
	}
	ip := g.clientIP(ctx)
	h := &ctx.Request.Header
	key := ctx.QueryArgs().Peek("k")
	if len(h.Peek("Authorization")) > 0 || len(h.Peek("X-API-Key")) > 0 || len(key) == 0 {
		var e *apierror.Error
		if key, e = credential(h); e != nil {
			return e
		}
	}
	info, e := g.authenticateKey(ctx, key, ip)
	if e != nil {
		return e
	}
	if site, _ := ctx.UserValue("site").(string); site != info.SiteID {
		return errWrongSite
	}
	if !info.Scopes.Has(apikey.ViewsWrite) {
		return scopeErrors[uint8(apikey.ViewsWrite)]
	}
	var b beacon
	if rt.method == fasthttp.MethodPost {
		kind := beaconKind(h.ContentType())
		if kind == beaconUnknown {
			return errBeaconType
		}
		if e := readBody(ctx, rt.maxBody); e != nil {
			return e
		}
		if e := b.parseBody(kind, ctx.Request.Body()); e != nil {
			return e
		}
	} else if e := b.parseArgs(ctx.QueryArgs()); e != nil {
		return e
	}
	if !h.IsHead() { // a HEAD fetches no page
		g.cfg.Views.CountView(info.SiteID, info.Zone, b.listing, ip, h.UserAgent(), isPrefetch(h), g.now())
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if rt.method == fasthttp.MethodPost {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
	ctx.SetContentType("image/gif")
	ctx.SetBody(pixel)
	return nil
}

// isPrefetch reports whether the browser fetched the page ahead of a visit
// (Sec-Purpose or Purpose: prefetch), which is not a view.
func isPrefetch(h *fasthttp.RequestHeader) bool {
	return bytes.Contains(h.Peek("Sec-Purpose"), []byte("prefetch")) ||
		bytes.Contains(h.Peek("Purpose"), []byte("prefetch")) ||
		bytes.Contains(h.Peek("X-Purpose"), []byte("preview")) ||
		bytes.Contains(h.Peek("X-Moz"), []byte("prefetch"))
}

type beaconBodyKind uint8

const (
	beaconUnknown beaconBodyKind = iota
	beaconJSON
	beaconForm
)

// beaconKind reads a beacon's Content-Type: JSON (application/json, or
// text/plain as sendBeacon sends a string), or a form.
func beaconKind(ct []byte) beaconBodyKind {
	mt, _, _ := bytes.Cut(ct, []byte(";"))
	mt = bytes.TrimSpace(mt)
	switch {
	case bytes.EqualFold(mt, []byte("application/json")), bytes.EqualFold(mt, []byte("text/plain")):
		return beaconJSON
	case bytes.EqualFold(mt, []byte("application/x-www-form-urlencoded")):
		return beaconForm
	}
	return beaconUnknown
}

// beacon is what a beacon says: the listing's ref (the page's path is
// checked, not kept).
type beacon struct {
	listing int64
}

// parseBody parses a beacon's body: the one parse of it, shared by every
// form it comes in (parseFields).
func (b *beacon) parseBody(kind beaconBodyKind, body []byte) *apierror.Error {
	if kind == beaconForm {
		var args fasthttp.Args
		args.ParseBytes(body)
		return b.parseArgs(&args)
	}
	var v struct {
		Listing json.RawMessage `json:"listing"`
		Path    *string         `json:"path"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil || d.More() {
		return apierror.InvalidField("body", "a JSON object with listing and, optionally, path")
	}
	listing := []byte(v.Listing) // a number, or a string of digits
	if len(listing) > 0 && listing[0] == '"' {
		var str string
		if json.Unmarshal(listing, &str) != nil {
			return apierror.InvalidField("listing", "required, a listing_ref")
		}
		listing = []byte(str)
	}
	var path []byte
	hasPath := v.Path != nil
	if hasPath {
		path = []byte(*v.Path)
	}
	return b.parseFields(listing, len(v.Listing) > 0, path, hasPath)
}

// parseArgs parses a beacon's fields from a query or a form: listing,
// path, and k (the beacon id, read before); others, or one given twice,
// are a 422.
func (b *beacon) parseArgs(args *fasthttp.Args) *apierror.Error {
	var bad *apierror.Error
	var seen [3]int
	args.VisitAll(func(k, _ []byte) {
		i := -1
		switch string(k) {
		case "listing":
			i = 0
		case "path":
			i = 1
		case "k":
			i = 2
		}
		switch {
		case bad != nil:
		case i < 0:
			bad = apierror.InvalidField(string(cutBytes(k, 64)), "unknown parameter")
		case seen[i] > 0:
			bad = apierror.InvalidField(string(k), "given more than once")
		default:
			seen[i]++
		}
	})
	if bad != nil {
		return bad
	}
	return b.parseFields(args.Peek("listing"), seen[0] > 0, args.Peek("path"), seen[1] > 0)
}

// parseFields checks the fields: listing a listing_ref (1 to 2^53−1,
// decimal digits only), path at most maxBeaconPath bytes of UTF-8.
func (b *beacon) parseFields(listing []byte, hasListing bool, path []byte, hasPath bool) *apierror.Error {
	if !hasListing || len(listing) == 0 || len(listing) > 16 {
		return apierror.InvalidField("listing", "required, a listing_ref")
	}
	for _, c := range listing {
		if c < '0' || c > '9' {
			return apierror.InvalidField("listing", "required, a listing_ref")
		}
	}
	ref, err := strconv.ParseInt(string(listing), 10, 64)
	if err != nil || ref < 1 || ref > maxListingRef {
		return apierror.InvalidField("listing", "required, a listing_ref")
	}
	if hasPath && (len(path) > maxBeaconPath || !utf8.Valid(path)) {
		return apierror.InvalidField("path", "at most 512 bytes of UTF-8")
	}
	b.listing = ref
	return nil
}

func cutBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
