package eventstream

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one dispatched Server-Sent Event.
type Event struct {
	// ID is the stream's last event id when the event was dispatched: the
	// event's own id: field, or the most recent one before it.
	ID string
	// Type is the event: field, "message" when there was none.
	Type string
	// Data is the event's data: lines joined by "\n". It belongs to the
	// receiver.
	Data []byte
}

// Limits bound what a Parser holds in memory. Zero fields take the defaults.
type Limits struct {
	// MaxLineBytes bounds one line, its field name included. Default 64 KiB.
	MaxLineBytes int
	// MaxEventBytes bounds one event's data. Default 1 MiB.
	MaxEventBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = 64 << 10
	}
	if l.MaxEventBytes <= 0 {
		l.MaxEventBytes = 1 << 20
	}
	return l
}

// Errors a Parser returns for a stream over its Limits. The stream cannot be
// trusted past them: a client should drop the connection.
var (
	ErrLineTooLong    = errors.New("eventstream: line too long")
	ErrEventTooLarge  = errors.New("eventstream: event too large")
	errNoProgressRead = errors.New("eventstream: reader returned no data and no error")
)

// readSize is the size of a Parser's read buffer.
const readSize = 4 << 10

// bom is the UTF-8 byte order mark a stream may start with.
const bom = "\xef\xbb\xbf"

// Parser reads Server-Sent Events from a byte stream as the WHATWG HTML
// standard's event stream interpretation says: lines end in CRLF, LF or CR;
// a leading UTF-8 BOM is skipped; a blank line dispatches; ":" starts a
// comment; fields are data (appended, lines joined by LF), event, id
// (ignored when it contains NUL) and retry (ASCII digits only); other fields
// are ignored; an event with no data is not dispatched, but its id still
// becomes the last event id; an event cut off by the end of the stream is
// discarded. Memory is bounded by Limits plus a 4 KiB read buffer.
//
// A Parser is not safe for concurrent use.
type Parser struct {
	r   io.Reader
	lim Limits

	buf        [readSize]byte
	start, end int
	readErr    error
	line       []byte // a line that spans reads
	skipLF     bool   // the last line ended in CR: a following LF belongs to it
	bomChecked bool
	bomN       int // bytes of a leading BOM matched so far

	data    []byte
	typ     string
	idBuf   string
	lastID  string
	retry   time.Duration
	retrySt bool
}

// NewParser returns a parser reading r.
func NewParser(r io.Reader, lim Limits) *Parser {
	return &Parser{r: r, lim: lim.withDefaults()}
}

// LastEventID returns the last event id as of the latest dispatch (an id
// with no data included).
func (p *Parser) LastEventID() string { return p.lastID }

// Retry returns the reconnection time the stream set, if it set one.
func (p *Parser) Retry() (time.Duration, bool) { return p.retry, p.retrySt }

// Next returns the next dispatched event. At the end of the stream it
// returns the reader's error (io.EOF for a clean end), any incomplete event
// being discarded; over a limit it returns ErrLineTooLong or
// ErrEventTooLarge.
func (p *Parser) Next() (Event, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			p.lastID = p.idBuf
			if len(p.data) == 0 {
				p.typ = ""
				continue
			}
			ev := Event{ID: p.lastID, Type: p.typ, Data: bytes.Clone(p.data[:len(p.data)-1])}
			if ev.Type == "" {
				ev.Type = "message"
			}
			p.data, p.typ = p.data[:0], ""
			return ev, nil
		}
		if err := p.field(line); err != nil {
			return Event{}, err
		}
	}
}

// field processes one non-blank line.
func (p *Parser) field(line []byte) error {
	if line[0] == ':' {
		return nil
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(p.data)+len(value)+1 > p.lim.MaxEventBytes+1 {
			return ErrEventTooLarge
		}
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
	case "event":
		p.typ = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.idBuf = string(value)
		}
	case "retry":
		if ms, ok := digits(value); ok {
			p.retry, p.retrySt = time.Duration(ms)*time.Millisecond, true
		}
	}
	return nil
}

// digits parses a non-empty run of ASCII digits, saturating at a day.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	const maxMs = 24 * 60 * 60 * 1000
	if len(b) > 9 {
		return maxMs, true
	}
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return min(n, maxMs), true
}

// readLine returns the next line without its terminator. The slice is valid
// until the next call.
func (p *Parser) readLine() ([]byte, error) {
	p.line = p.line[:0]
	empty := 0
	for {
		if p.start == p.end {
			if p.readErr != nil {
				return nil, p.readErr
			}
			n, err := p.r.Read(p.buf[:])
			p.start, p.end, p.readErr = 0, n, err
			if n == 0 && err == nil {
				if empty++; empty >= 100 {
					p.readErr = errNoProgressRead
				}
			}
			continue
		}
		if !p.bomChecked {
			// A BOM may arrive split across reads: match it byte by byte,
			// and give back what matched when it turns out not to be one.
			if c := p.buf[p.start]; c == bom[p.bomN] {
				p.start++
				if p.bomN++; p.bomN == len(bom) {
					p.bomChecked = true
				}
				continue
			}
			p.bomChecked = true
			p.line = append(p.line, bom[:p.bomN]...)
		}
		chunk := p.buf[p.start:p.end]
		if p.skipLF {
			p.skipLF = false
			if chunk[0] == '\n' {
				p.start++
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if len(p.line)+len(chunk) > p.lim.MaxLineBytes {
				return nil, ErrLineTooLong
			}
			p.line = append(p.line, chunk...)
			p.start = p.end
			continue
		}
		if len(p.line)+i > p.lim.MaxLineBytes {
			return nil, ErrLineTooLong
		}
		p.skipLF = chunk[i] == '\r'
		p.start += i + 1
		if len(p.line) == 0 {
			return chunk[:i], nil
		}
		p.line = append(p.line, chunk[:i]...)
		return p.line, nil
	}
}
