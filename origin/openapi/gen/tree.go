package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is a JSON value that keeps the order of object keys, which the
// reference follows: the document's order is the order a reader expects.
type node struct {
	keys         []string // object keys, in document order
	obj          map[string]*node
	arr          []*node
	val          any // string, json.Number, bool or nil for scalars
	isObj, isArr bool
}

// parseTree decodes a JSON document into a node tree.
func parseTree(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the document")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{isObj: true, obj: map[string]*node{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := n.obj[key]; !dup {
				n.keys = append(n.keys, key)
			}
			n.obj[key] = v
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &node{isArr: true}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.arr = append(n.arr, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return &node{val: tok}, nil
}

// get follows keys from n; nil when one is missing.
func (n *node) get(keys ...string) *node {
	for _, k := range keys {
		if n == nil || !n.isObj {
			return nil
		}
		n = n.obj[k]
	}
	return n
}

// str returns n's string value, "" for anything else.
func (n *node) str() string {
	if n == nil {
		return ""
	}
	s, _ := n.val.(string)
	return s
}

// bool returns n's boolean value, false for anything else.
func (n *node) bool() bool {
	if n == nil {
		return false
	}
	b, _ := n.val.(bool)
	return b
}

// scalar renders a scalar (or a short array or object) as JSON text.
func (n *node) scalar() string {
	if n == nil {
		return ""
	}
	switch {
	case n.isArr:
		parts := make([]string, len(n.arr))
		for i, v := range n.arr {
			parts[i] = v.scalar()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case n.isObj:
		return "{…}"
	}
	switch v := n.val.(type) {
	case string:
		b, _ := json.Marshal(v)
		return string(b)
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

// resolve follows a local $ref ("#/components/…") from n, once.
func (doc *node) resolve(n *node) *node {
	ref := n.get("$ref").str()
	if ref == "" {
		return n
	}
	target := doc.get(strings.Split(strings.TrimPrefix(ref, "#/"), "/")...)
	if target == nil {
		return n
	}
	return target
}

// refName is the last part of n's $ref, "" when n is not a reference.
func refName(n *node) string {
	ref := n.get("$ref").str()
	return ref[strings.LastIndex(ref, "/")+1:]
}
