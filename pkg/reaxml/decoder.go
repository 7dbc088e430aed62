package reaxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"
	_ "time/tzdata" // Australia/Sydney must load on hosts without zoneinfo
)

// DefaultLocation is the time zone feeds are read in when Options.Location
// is nil: Australia/Sydney.
var DefaultLocation = mustLoadLocation("Australia/Sydney")

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err) // cannot happen: time/tzdata is embedded
	}
	return loc
}

// Options configures a [Decoder]. The zero value is ready to use.
type Options struct {
	// Location is the time zone of the feed's local times (modTime, dates,
	// inspections). Nil means [DefaultLocation] (Australia/Sydney).
	Location *time.Location
}

// Decoder reads listings from a REAXML feed one at a time. It holds at most
// one listing element in memory. A Decoder is not safe for concurrent use.
type Decoder struct {
	xd      *xml.Decoder
	src     *source
	fs      *fastScanner // nil: encoding/xml reads every token
	noFast  bool         // tests: encoding/xml only
	recoded bool         // the feed's encoding is converted: encoding/xml only
	// lineBase is added to encoding/xml's line numbers once it reads on
	// from where the fast path gave up.
	lineBase int
	loc      *time.Location
	err      error // sticky: io.EOF or a fatal feed error
	started  bool
	pool     nodePool
	tb       treeBuilder

	feedDate    time.Time
	feedDateErr error
}

// NewDecoder returns a Decoder reading the feed from r. It reads r through
// a buffer and only as far as each call to Next needs.
func NewDecoder(r io.Reader, opts Options) *Decoder {
	loc := opts.Location
	if loc == nil {
		loc = DefaultLocation
	}
	d := &Decoder{src: &source{r: newSanitizer(r)}, loc: loc}
	d.xd = d.newXML(d.src)
	return d
}

// newXML returns the encoding/xml decoder reading r.
func (d *Decoder) newXML(r io.Reader) *xml.Decoder {
	xd := xml.NewDecoder(r)
	xd.Strict = false // tolerate bare '&' and auto-close mismatched tags
	xd.Entity = xml.HTMLEntity
	xd.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		out, err := charsetReader(label, in)
		if out != in {
			d.recoded = true
		}
		return out, err
	}
	return xd
}

// inputLine is the feed's line encoding/xml has read up to.
func (d *Decoder) inputLine() int {
	line, _ := d.xd.InputPos()
	return line + d.lineBase
}

// fallback hands the rest of the feed, from where the fast path stopped,
// to encoding/xml: a fresh decoder reads it inside a stand-in root
// element (the real one is open), with line numbers carried on.
func (d *Decoder) fallback() {
	s, fs := d.src, d.fs
	d.fs = nil
	s.buf = append([]byte("<propertyList>"), s.buf[s.pos:]...)
	s.pos = 0
	d.lineBase = fs.line - 1
	d.xd = d.newXML(s)
	if _, err := d.xd.Token(); err != nil {
		d.fail(err) // cannot happen: the stand-in is well formed
	}
}

// FeedDate returns the propertyList date attribute in the decoder's
// location. It reads the feed up to the root element if Next has not been
// called yet. It returns the zero time and a nil error when the attribute is
// absent, and a *ValueError when it is unreadable; a feed error (see Next)
// is returned as is.
func (d *Decoder) FeedDate() (time.Time, error) {
	if err := d.start(); err != nil {
		return time.Time{}, err
	}
	return d.feedDate, d.feedDateErr
}

// Next returns the next listing of the feed, or io.EOF after the last one.
//
// A listing that cannot be read yields (nil, *ListingError); the decoder has
// skipped that whole element and the next call goes on with the following
// listing. XML that is broken beyond recovery yields an error that is not a
// ListingError, and every later call returns the same error: a truncated
// feed wraps io.ErrUnexpectedEOF (and the *xml.SyntaxError), a document
// whose root is not propertyList wraps ErrNotREAXML, other syntax errors
// wrap *xml.SyntaxError, and read errors from the underlying reader are
// wrapped as they are. Content after the end of propertyList is ignored.
func (d *Decoder) Next() (*Listing, error) {
	if err := d.start(); err != nil {
		return nil, err
	}
	if d.fs != nil {
		n, eof, ok := d.fs.next()
		switch {
		case !ok:
			d.fallback()
			if d.err != nil {
				return nil, d.err
			}
		case eof:
			d.err = io.EOF
			return nil, io.EOF
		default:
			return d.listing(n)
		}
	}
	for {
		line := d.inputLine()
		tok, err := d.xd.Token()
		if err != nil {
			return nil, d.fail(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n, err := d.readElement(t, line)
			if err != nil {
				return nil, d.fail(err)
			}
			return d.listing(n)
		case xml.EndElement:
			d.err = io.EOF // the root element has ended; anything after it is ignored
			return nil, io.EOF
		}
	}
}

// start reads up to and including the root start element.
func (d *Decoder) start() error {
	if d.err != nil {
		return d.err
	}
	if d.started {
		return nil
	}
	for {
		line := d.inputLine()
		tok, err := d.xd.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrNotREAXML
			}
			return d.fail(err)
		}
		root, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root.Name.Local != "propertyList" {
			return d.fail(fmt.Errorf("%w: found <%s>", ErrNotREAXML, cut(root.Name.Local)))
		}
		d.started = true
		// From here the fast path reads the listings, when encoding/xml
		// has read exactly up to here and the feed is UTF-8 the sanitizer
		// has repaired (the fast path does not check it again).
		selfClosed := d.src.last2 == '/'<<8|'>'
		san, _ := d.src.r.(*sanitizer)
		repaired := san != nil && san.utf8
		if !d.noFast && !d.recoded && repaired && !selfClosed && d.xd.InputOffset() == d.src.base+int64(d.src.pos) {
			d.fs = &fastScanner{src: d.src, line: d.inputLine(), pool: &d.pool, names: map[string]string{}}
		}
		// Only the date attribute is read: username and password are never
		// looked at, copied or kept.
		for _, a := range root.Attr {
			if a.Name.Local != "date" {
				continue
			}
			t, err := ParseDate(a.Value, d.loc)
			if err != nil {
				d.feedDateErr = &ValueError{Field: "propertyList@date", Line: line, Value: cut(a.Value), Want: "date"}
			}
			d.feedDate = t
		}
		return nil
	}
}

// fail records a fatal error and returns it.
func (d *Decoder) fail(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		se.Line += d.lineBase
	}
	switch {
	case err == io.EOF:
		err = fmt.Errorf("reaxml: %w", io.ErrUnexpectedEOF)
	case errors.As(err, &se) && se.Msg == "unexpected EOF":
		err = fmt.Errorf("reaxml: feed ends early: %w (%w)", se, io.ErrUnexpectedEOF)
	case !errors.Is(err, ErrNotREAXML):
		err = fmt.Errorf("reaxml: %w", err)
	}
	d.err = err
	return err
}

// readElement reads the element that start opens, through its end tag.
func (d *Decoder) readElement(start xml.StartElement, line int) (*node, error) {
	d.pool.reset()
	root := d.pool.node(start, line)
	tb := &d.tb
	*tb = treeBuilder{pool: &d.pool, stack: append(tb.stack[:0], root), nodes: 1}
	for {
		line := d.inputLine()
		tok, err := d.xd.Token()
		if err != nil {
			return nil, err
		}
		if !tb.add(tok, line) {
			break
		}
	}
	// A listing over the limits keeps its partial (bounded) tree so its ids
	// can still be reported.
	root.tooLarge = tb.tooLarge
	return root, nil
}
