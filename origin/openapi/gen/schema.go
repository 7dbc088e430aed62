package main

import (
	"strings"
)

// typeOf describes a schema in a few words: "string (date-time)", "array
// of Listing", "Price | null". Named schemas are links when linked is set.
func (r *renderer) typeOf(n *node, linked bool) string {
	if n == nil {
		return "any"
	}
	if name := refName(n); name != "" {
		if target := r.doc.resolve(n); !linked && target.get("oneOf") != nil {
			return r.alternatives(target.get("oneOf"), linked)
		}
		if linked {
			return "[" + name + "](#schema-" + strings.ToLower(name) + ")"
		}
		return name
	}
	var t string
	switch {
	case n.get("allOf") != nil && len(n.get("allOf").arr) == 1:
		t = r.typeOf(n.get("allOf").arr[0], linked)
	case n.get("oneOf") != nil:
		t = r.alternatives(n.get("oneOf"), linked)
	case n.get("anyOf") != nil && n.get("type") == nil:
		t = r.alternatives(n.get("anyOf"), linked)
	default:
		t = n.get("type").str()
		switch t {
		case "array":
			if linked {
				t = "array of " + r.typeOf(n.get("items"), linked)
			} else {
				t = "[" + r.typeOf(n.get("items"), linked) + "]"
			}
		case "object":
			if ap := n.get("additionalProperties"); ap != nil && ap.isObj && n.get("properties") == nil {
				t = "object of " + r.typeOf(ap, linked)
			}
		case "":
			t = "any"
		}
		if f := n.get("format").str(); f != "" {
			t += " (" + f + ")"
		}
		if enum := n.get("enum"); !linked && enum != nil && len(enum.arr) <= 5 {
			t = r.alternatives(enum, linked)
		}
	}
	if n.get("nullable").bool() {
		t += " | null"
	}
	return t
}

func (r *renderer) alternatives(list *node, linked bool) string {
	var alts []string
	for _, a := range list.arr {
		if a.isObj {
			alts = append(alts, r.typeOf(a, linked))
		} else {
			alts = append(alts, a.scalar()) // an enum value
		}
	}
	return strings.Join(alts, " | ")
}

// constraints lists a schema's limits, values and default, as a sentence.
func (r *renderer) constraints(n *node) string {
	if n == nil {
		return ""
	}
	n = r.doc.resolve(n)
	var out []string
	if items := n.get("items"); items != nil {
		if c := r.constraints(items); c != "" {
			out = append(out, "each item: "+strings.TrimSuffix(c, "."))
		}
		if v := n.get("minItems"); v != nil {
			out = append(out, "at least "+v.scalar()+" item(s)")
		}
	}
	if enum := n.get("enum"); enum != nil {
		var vs []string
		for _, v := range enum.arr {
			vs = append(vs, "`"+unquote(v)+"`")
		}
		out = append(out, "one of "+strings.Join(vs, ", "))
	}
	if s := bounds(n.get("minimum"), n.get("maximum"), ""); s != "" {
		out = append(out, s)
	}
	if s := bounds(n.get("minLength"), n.get("maxLength"), " characters"); s != "" {
		out = append(out, s)
	}
	if v := n.get("maxProperties"); v != nil {
		out = append(out, "at most "+v.scalar()+" keys")
	}
	if v := n.get("pattern"); v != nil {
		out = append(out, "matches `"+unquote(v)+"`")
	}
	if v := n.get("default"); v != nil {
		out = append(out, "default `"+unquote(v)+"`")
	}
	if len(out) == 0 {
		return ""
	}
	return capitalize(strings.Join(out, "; ")) + "."
}

// bounds describes a range: "1 to 100", "at least 0", "at most 3".
func bounds(lo, hi *node, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return lo.scalar() + " to " + hi.scalar() + unit
	case lo != nil:
		return "at least " + lo.scalar() + unit
	case hi != nil:
		return "at most " + hi.scalar() + unit
	}
	return ""
}

func unquote(n *node) string {
	if s, ok := n.val.(string); ok {
		return s
	}
	return n.scalar()
}

// isPinnedError reports whether a schema only pins an error envelope's code
// (the errors tables say those).
func isPinnedError(s *node) bool {
	return s.get("allOf") != nil && strings.HasPrefix(s.get("description").str(), "The error envelope with code")
}

// schemas writes a section per component schema, fields in document order,
// inline objects flattened into dotted names.
func (r *renderer) schemas() {
	r.printf("\n## Schemas\n")
	all := r.doc.get("components", "schemas")
	for _, name := range all.keys {
		s := all.obj[name]
		if isPinnedError(s) {
			continue
		}
		r.printf("\n<a id=\"schema-%s\"></a>\n### %s\n\n", strings.ToLower(name), name)
		if d := s.get("description").str(); d != "" {
			r.printf("%s\n\n", d)
		}
		switch {
		case s.get("properties") != nil:
			r.printf("| Field | Type | Required | Notes |\n|---|---|---|---|\n")
			r.fields("", s)
			if any := s.get("anyOf"); any != nil {
				var alts []string
				for _, a := range any.arr {
					alts = append(alts, "`"+strings.Join(strs(a.get("required")), "`, `")+"`")
				}
				r.printf("\nAlso required: at least one of %s.\n", strings.Join(alts, ", "))
			}
		case s.get("oneOf") != nil:
			r.printf("One of: %s.\n", r.alternatives(s.get("oneOf"), true))
		default:
			r.printf("%s. %s\n", r.typeOf(s, true), r.constraints(s))
		}
		if ex := s.get("example"); ex != nil && s.get("properties") != nil {
			r.sketch(s)
		}
	}
}

// fields writes the rows of an object's properties, prefix naming the
// enclosing inline object.
func (r *renderer) fields(prefix string, s *node) {
	required := map[string]bool{}
	for _, k := range strs(s.get("required")) {
		required[k] = true
	}
	props := s.get("properties")
	for _, k := range props.keys {
		p := props.obj[k]
		r.printf("| `%s%s` | %s | %s | %s |\n", prefix, k, cell(r.typeOf(p, true)), yesNo(required[k]),
			cell(join(p.get("description").str(), r.constraints(p))))
		if refName(p) == "" && p.get("properties") != nil {
			r.fields(prefix+k+".", p)
		}
	}
	if ap := s.get("additionalProperties"); ap != nil && ap.isObj {
		r.printf("| `%s*` | %s | no | Any other key. |\n", prefix, cell(r.typeOf(ap, true)))
	}
}

func strs(n *node) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, v := range n.arr {
		out = append(out, v.str())
	}
	return out
}
