package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/reaxml"
)

// tableKeys are the parts of a record kept in their own tables, not in
// listings.doc; "line" is where the record was in its feed.
var tableKeys = []string{"line", "agents", "media", "inspections"}

// deepMerged are the groups whose fields a record may send one at a time:
// the stored group is merged field by field. Every other element of a
// record replaces the stored one whole.
var deepMerged = map[string]bool{
	"address": true, "features": true, "ruralFeatures": true, "allowances": true,
	"estate": true, "ecoFriendly": true,
}

// record is one listing of a feed, prepared for the database.
type record struct {
	l     *reaxml.Listing
	whole []byte // the record as JSON
	hash  []byte // SHA-256 of whole, line excluded
}

func newRecord(l *reaxml.Listing) (*record, error) {
	line := l.Line
	l.Line = 0
	whole, err := json.Marshal(l)
	l.Line = line
	if err != nil {
		return nil, fmt.Errorf("encode listing: %w", err)
	}
	sum := sha256.Sum256(whole)
	return &record{l: l, whole: whole, hash: sum[:]}, nil
}

// doc is the record as the listing's document: table parts removed. It is
// decoded only for records that are written, not for the unchanged ones
// most of an update feed is.
func (r *record) doc() (map[string]json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(r.whole, &doc); err != nil {
		return nil, err
	}
	for _, k := range tableKeys {
		delete(doc, k)
	}
	return doc, nil
}

// newDoc is the document of a record whose listing is not stored yet, and
// its columns: what doc, decodeDoc and columnsOf give, without the two
// JSON decodes and the encode between them (most of a first import's Go
// work). The text differs from decodeDoc's in key order only, which jsonb
// does not keep. ok is false when a column would not survive the JSON
// round trip as it is (text that is not UTF-8); the caller then takes the
// long way.
func (r *record) newDoc() (doc []byte, c columns, ok bool, err error) {
	d := *r.l
	d.Line, d.Agents, d.Media, d.Inspections = 0, nil, nil, nil // the table parts: omitted
	if doc, err = json.Marshal(&d); err != nil {
		return nil, columns{}, false, err
	}
	// Line has no omitzero; JSON escapes every quote inside a string, so
	// the first `,"line":0` is the field's own.
	i := bytes.Index(doc, []byte(`,"line":0`))
	if i < 0 {
		return nil, columns{}, false, nil
	}
	doc = append(doc[:i], doc[i+len(`,"line":0`):]...)
	c = columnsOf(r.l)
	for _, s := range []*string{c.category, c.headline, c.description, c.suburb, c.state, c.postcode, c.searchAddress} {
		if s != nil && !utf8.ValidString(*s) {
			return nil, columns{}, false, nil
		}
	}
	return doc, c, true, nil
}

// merge overlays the record's document on the stored one.
func merge(stored, update map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(stored)+len(update))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range update {
		old, ok := out[k]
		if !ok || !deepMerged[k] {
			out[k] = v
			continue
		}
		m, err := mergeObjects(old, v)
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", k, err)
		}
		out[k] = m
	}
	return out, nil
}

// mergeObjects merges two JSON objects recursively; anything that is not an
// object on both sides is replaced by the update.
func mergeObjects(old, update json.RawMessage) (json.RawMessage, error) {
	if !isObject(old) || !isObject(update) {
		return update, nil
	}
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(old, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(update, &b); err != nil {
		return nil, err
	}
	for k, v := range b {
		if prev, ok := a[k]; ok {
			m, err := mergeObjects(prev, v)
			if err != nil {
				return nil, err
			}
			a[k] = m
			continue
		}
		a[k] = v
	}
	return json.Marshal(a)
}

func isObject(b json.RawMessage) bool {
	s := strings.TrimSpace(string(b))
	return len(s) > 0 && s[0] == '{'
}

// decodeDoc reads a merged document back as a listing, to compute the
// columns that filters and sorts use.
func decodeDoc(doc map[string]json.RawMessage) (*reaxml.Listing, []byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	var l reaxml.Listing
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, nil, err
	}
	return &l, b, nil
}

// decodeStored reads a stored listing's document.
func decodeStored(b []byte) (map[string]json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
