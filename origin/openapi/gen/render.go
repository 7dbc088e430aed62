package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// render returns the Markdown reference of an OpenAPI document: an index
// of routes, one section per operation (method, path, scope,
// authentication, parameters, request body, responses with a sketch of the
// success body, errors), and the schemas. The output depends only on the
// document.
func render(raw []byte) ([]byte, error) {
	doc, err := parseTree(raw)
	if err != nil {
		return nil, fmt.Errorf("parse the document: %w", err)
	}
	r := &renderer{doc: doc}
	ops, err := r.operations()
	if err != nil {
		return nil, err
	}
	r.intro()
	r.index(ops)
	for _, tag := range doc.get("tags").arr {
		name := tag.get("name").str()
		r.printf("\n## %s\n\n%s\n", name, tag.get("description").str())
		for _, op := range ops {
			if op.tag == name {
				r.operation(op)
			}
		}
	}
	r.schemas()
	return r.buf.Bytes(), nil
}

type renderer struct {
	doc *node
	buf bytes.Buffer
}

func (r *renderer) printf(format string, args ...any) { fmt.Fprintf(&r.buf, format, args...) }

// op is one operation with what the reference shows of it.
type op struct {
	method, path string // "GET", "/v1/sites/{site}/listings"
	id, tag      string
	item, node   *node
}

var methods = []string{"get", "put", "post", "patch", "delete"}

// operations lists the document's operations in document order.
func (r *renderer) operations() ([]op, error) {
	var out []op
	paths := r.doc.get("paths")
	for _, p := range paths.keys {
		item := paths.obj[p]
		base, err := r.basePath(item)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", p, err)
		}
		for _, m := range methods {
			if n := item.get(m); n != nil {
				o := op{method: strings.ToUpper(m), path: base + p, id: n.get("operationId").str(), item: item, node: n}
				if tags := n.get("tags"); tags != nil && len(tags.arr) > 0 {
					o.tag = tags.arr[0].str()
				}
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// basePath is the path of the server an item is served from, variables at
// their defaults.
func (r *renderer) basePath(item *node) (string, error) {
	servers := item.get("servers")
	if servers == nil {
		servers = r.doc.get("servers")
	}
	if servers == nil || len(servers.arr) == 0 {
		return "", nil
	}
	srv := servers.arr[0]
	raw := srv.get("url").str()
	vars := srv.get("variables")
	if vars != nil {
		for _, k := range vars.keys {
			raw = strings.ReplaceAll(raw, "{"+k+"}", vars.obj[k].get("default").str())
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(u.Path, "/"), nil
}

func (r *renderer) intro() {
	info := r.doc.get("info")
	srv := r.doc.get("servers").arr[0]
	r.printf("# %s reference\n\n", info.get("title").str())
	r.printf("<!-- Generated from origin/openapi/openapi.json by `go run ./origin/openapi/gen`; do not edit by hand. -->\n\n")
	r.printf("Version %s · OpenAPI %s · served at `GET /v1/openapi.json`.\n\n", info.get("version").str(), r.doc.get("openapi").str())
	r.printf("Base address: `%s` — %s Default: `%s`. Paths below are shown in full, `/v1` included; the service endpoints are at the root.\n\n",
		srv.get("url").str(), srv.get("description").str(), srv.get("variables", "base_url", "default").str())
	r.printf("%s\n", strings.TrimSpace(info.get("description").str()))
	r.printf("\nIn the tables below, a header marked `?` is not always present; the others always are.\n")
}

func (r *renderer) index(ops []op) {
	r.printf("\n## Routes\n\n| Method | Path | Scope | Summary |\n|---|---|---|---|\n")
	for _, o := range ops {
		r.printf("| %s | [`%s`](#%s) | %s | %s |\n", o.method, o.path, anchor(o), r.scope(o.node),
			cell(o.node.get("summary").str()))
	}
}

func anchor(o op) string { return "op-" + o.id }

func (r *renderer) operation(o op) {
	n := o.node
	r.printf("\n<a id=\"%s\"></a>\n### `%s %s` — %s\n\n", anchor(o), o.method, o.path, n.get("summary").str())
	r.printf("%s\n\n", strings.TrimSpace(n.get("description").str()))
	r.printf("| | |\n|---|---|\n")
	r.printf("| Scope | %s |\n", r.scope(n))
	r.printf("| Authentication | %s |\n", cell(r.security(n.get("security"))))
	if c := n.get("x-edge-cached"); c != nil {
		r.printf("| Cached at the edge | %s |\n", map[bool]string{true: "yes", false: "no"}[c.bool()])
	}
	r.parameters(o)
	r.requestBody(n.get("requestBody"))
	r.responses(n.get("responses"))
}

// scope is an operation's x-scope, "none" when it needs no credentials,
// "any" when it needs some but no scope.
func (r *renderer) scope(n *node) string {
	if sc := n.get("x-scope").str(); sc != "" {
		return "`" + sc + "`"
	}
	sec := n.get("security")
	if sec == nil || len(sec.arr) == 0 {
		return "none"
	}
	for _, req := range sec.arr {
		if len(req.keys) == 0 {
			return "none"
		}
	}
	return "any"
}

// security describes the alternatives of a security requirement.
func (r *renderer) security(sec *node) string {
	if sec == nil || len(sec.arr) == 0 {
		return "none"
	}
	var alts []string
	for _, req := range sec.arr {
		if len(req.keys) == 0 {
			alts = append(alts, "none")
			continue
		}
		for _, name := range req.keys {
			s := r.doc.get("components", "securitySchemes", name)
			desc := strings.TrimSuffix(s.get("description").str(), ".")
			if scopes := req.obj[name]; len(scopes.arr) > 0 {
				var sc []string
				for _, v := range scopes.arr {
					sc = append(sc, "`"+v.str()+"`")
				}
				desc += " (scope " + strings.Join(sc, ", ") + ")"
			}
			alts = append(alts, desc)
		}
	}
	return strings.Join(alts, ", or ")
}

func (r *renderer) parameters(o op) {
	var params []*node
	for _, src := range []*node{o.item.get("parameters"), o.node.get("parameters")} {
		if src != nil {
			for _, p := range src.arr {
				params = append(params, r.doc.resolve(p))
			}
		}
	}
	if len(params) == 0 {
		return
	}
	r.printf("\n**Parameters**\n\n| Name | In | Type | Required | Description |\n|---|---|---|---|---|\n")
	for _, p := range params {
		schema := p.get("schema")
		typ := r.typeOf(schema, true)
		if p.get("style").str() == "form" && p.get("explode") != nil && !p.get("explode").bool() {
			typ = "comma-separated " + typ
		}
		r.printf("| `%s` | %s | %s | %s | %s |\n", p.get("name").str(), p.get("in").str(), cell(typ),
			yesNo(p.get("required").bool()), cell(join(p.get("description").str(), r.constraints(schema))))
	}
}

func (r *renderer) requestBody(rb *node) {
	if rb == nil {
		return
	}
	rb = r.doc.resolve(rb)
	r.printf("\n**Request body**%s\n\n", map[bool]string{true: " (required)", false: ""}[rb.get("required").bool()])
	if d := rb.get("description").str(); d != "" {
		r.printf("%s\n\n", d)
	}
	content := rb.get("content")
	for _, mt := range content.keys {
		schema := content.obj[mt].get("schema")
		r.printf("- `%s`: %s\n", mt, r.typeOf(schema, true))
	}
	if len(content.keys) > 0 {
		r.sketch(content.obj[content.keys[0]].get("schema"))
	}
}

func (r *renderer) responses(resps *node) {
	r.printf("\n**Responses**\n\n| Status | Meaning | Body | Headers |\n|---|---|---|---|\n")
	var sketch *node
	var errs [][3]string
	for _, status := range sortedStatuses(resps.keys) {
		resp := r.doc.resolve(resps.obj[status])
		body := "—"
		var schema *node
		if content := resp.get("content"); content != nil && len(content.keys) > 0 {
			mt := content.keys[0]
			schema = content.obj[mt].get("schema")
			body = r.typeOf(schema, true)
			if c := r.errorCodes(schema); c != "" && isPinnedError(r.doc.resolve(schema)) {
				body = "[ErrorEnvelope](#schema-errorenvelope) " + c
			}
			if mt != "application/json" {
				body += " (`" + mt + "`)"
			}
		}
		r.printf("| %s | %s | %s | %s |\n", status, cell(resp.get("description").str()), cell(body), cell(r.headers(resp.get("headers"))))
		if status < "300" && sketch == nil && schema != nil {
			sketch = schema
		}
		if status >= "400" {
			errs = append(errs, [3]string{status, r.errorCodes(schema), resp.get("description").str()})
		}
	}
	if sketch != nil {
		r.printf("\nSuccess body:\n")
		r.sketch(sketch)
	}
	if len(errs) > 0 {
		r.printf("\n**Errors**\n\n| Status | Code | When |\n|---|---|---|\n")
		for _, e := range errs {
			when := e[2]
			if prefix, rest, ok := strings.Cut(when, ": "); ok && strings.Contains(e[1], "`"+prefix+"`") {
				when = capitalize(rest)
			}
			r.printf("| %s | %s | %s |\n", e[0], cell(e[1]), cell(when))
		}
	}
}

// sortedStatuses orders status codes numerically (they are all 3 digits).
func sortedStatuses(keys []string) []string {
	out := slices.Clone(keys)
	slices.Sort(out)
	return out
}

// headers lists a response's headers, optional ones marked "?".
func (r *renderer) headers(h *node) string {
	if h == nil {
		return ""
	}
	var names []string
	for _, k := range h.keys {
		hd := r.doc.resolve(h.obj[k])
		name := "`" + k + "`"
		if !hd.get("required").bool() {
			name += "?"
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// errorCodes names the codes an error body can carry: the envelope's
// pinned code, VALIDATION_ERROR, or the values of an RFC 6749 error.
func (r *renderer) errorCodes(schema *node) string {
	if schema == nil {
		return ""
	}
	name := refName(schema)
	s := r.doc.resolve(schema)
	if name == "ValidationErrorEnvelope" {
		return "`VALIDATION_ERROR`"
	}
	if all := s.get("allOf"); all != nil {
		for _, sub := range all.arr {
			if enum := sub.get("properties", "error", "properties", "code", "enum"); enum != nil {
				return "`" + enum.arr[0].str() + "`"
			}
		}
	}
	if enum := s.get("properties", "error", "enum"); enum != nil {
		var vs []string
		for _, v := range enum.arr {
			vs = append(vs, "`"+v.str()+"`")
		}
		return strings.Join(vs, ", ")
	}
	return ""
}

// sketch writes an example of a body: the schema's example if it has one,
// else its shape one level deep, named schemas by name.
func (r *renderer) sketch(schema *node) {
	s := r.doc.resolve(schema)
	if ex := s.get("example"); ex != nil {
		b, _ := json.MarshalIndent(toAny(ex), "", "  ")
		r.printf("\n```json\n%s\n```\n", b)
		return
	}
	props := s.get("properties")
	if props == nil {
		return
	}
	r.printf("\n```\n{\n")
	for i, k := range props.keys {
		comma := ","
		if i == len(props.keys)-1 {
			comma = ""
		}
		r.printf("  %q: %s%s\n", k, r.typeOf(props.obj[k], false), comma)
	}
	r.printf("}\n```\n")
}

// toAny turns a node back into plain values, keeping key order through
// json.RawMessage.
func toAny(n *node) any {
	switch {
	case n.isObj:
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(toAny(n.obj[k]))
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vb)
		}
		b.WriteByte('}')
		return json.RawMessage(b.Bytes())
	case n.isArr:
		out := make([]any, len(n.arr))
		for i, v := range n.arr {
			out[i] = toAny(v)
		}
		return out
	}
	return n.val
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// join joins non-empty parts as sentences.
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// cell makes s fit a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
