package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/jsonobject"
)

// Problems maps each offending field of a request (or "body", or "contact"
// when no contact method is given) to a message for the client: the
// details of a VALIDATION_ERROR. Nil or empty means no problem.
type Problems map[string]string

// Add records msg for field, appending it to an earlier message for the
// same field.
func (p Problems) Add(field, msg string) {
	if prev, ok := p[field]; ok {
		msg = prev + "; " + msg
	}
	p[field] = msg
}

// Merge adds every problem of q to p.
func (p Problems) Merge(q Problems) {
	for k, v := range q {
		p.Add(k, v)
	}
}

// The request body's fields, in the order Payload writes them.
var fieldOrder = []string{"name", "email", "phone", "mobile", "message", "type", "priority",
	"listing_ref", "listing_id", "agent_email", "metadata"}

// decoders check one field's raw JSON value and store it in the lead. They
// return "" when the value is good, else the message for the field.
var decoders = map[string]func(d *decoding, raw json.RawMessage) string{
	"name":        decodeName,
	"email":       decodeEmail,
	"phone":       decodePhone,
	"mobile":      decodeMobile,
	"message":     decodeMessage,
	"type":        decodeType,
	"priority":    decodePriority,
	"listing_ref": decodeListingRef,
	"listing_id":  decodeListingID,
	"agent_email": decodeAgentEmail,
	"metadata":    decodeMetadataField,
}

// decoding is the state of one Decode.
type decoding struct {
	l       Lead
	payload map[string]any // the fields as received, for Lead.Payload
}

// Decode decodes and validates a request body. It returns every problem it
// finds, not only the first: each unknown field, each field of the wrong
// type or with a bad value, and "contact" when no e-mail or phone is given.
// A body that is not one JSON object (malformed, not UTF-8, trailing data)
// is one problem under "body"; a leading UTF-8 byte order mark is skipped.
// A JSON null, or a blank string, counts as an optional field not given.
//
// On success Problems is nil and the Lead is normalised. With problems, the
// Lead holds the fields that were good (and no Payload), so that their
// references can still be checked. Decode does not know which listings and
// agents exist: see ResolveRefs. It never panics and is safe for
// concurrent use.
func Decode(body []byte) (Lead, Problems) {
	fields, err := jsonobject.Split(body)
	if err != nil {
		return Lead{}, Problems{"body": bodyProblem(err)}
	}
	d := &decoding{payload: map[string]any{}}
	d.l.Type, d.l.Priority, d.l.Metadata = TypeGeneral, PriorityWarm, json.RawMessage("{}")
	problems := Problems{}
	for _, f := range fields {
		if f.Repeated {
			problems.Add(f.Name, "is given more than once")
			continue
		}
		dec, known := decoders[f.Name]
		if !known {
			problems.Add(f.Name, "is not a field of a lead")
			continue
		}
		if msg := dec(d, f.Raw); msg != "" {
			problems.Add(f.Name, msg)
		}
	}
	if _, given := d.payload["name"]; !given && problems["name"] == "" {
		problems.Add("name", "is required")
	}
	_, email := problems["email"]
	_, phone := problems["phone"]
	_, mobile := problems["mobile"]
	if !d.l.HasContact() && !email && !phone && !mobile {
		problems.Add("contact", "give at least one of email, phone, mobile")
	}
	if len(problems) > 0 {
		return d.l, problems
	}
	d.l.Payload = encodePayload(d.payload)
	return d.l, nil
}

// bodyProblem is the problem of a body that is not one JSON object, with
// the decoder's detail when it is not valid JSON.
func bodyProblem(err error) string {
	je, ok := errors.AsType[*jsonobject.Error](err)
	if !ok {
		return syntaxMessage(err)
	}
	if je.Syntax != nil {
		return syntaxMessage(je.Syntax)
	}
	return je.Problem
}

// syntaxMessage describes a JSON syntax error for the client.
func syntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "is not valid JSON: unexpected end of input"
	}
	return "is not valid JSON: " + err.Error()
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// optionalString decodes an optional string field: it records the value
// as received in the payload and returns it trimmed; "" for null or blank.
// msg is set when the value is not a string or holds a NUL.
func (d *decoding) optionalString(name string, raw json.RawMessage) (trimmed, msg string) {
	s, present, ok := jsonobject.String(raw)
	switch {
	case !ok:
		return "", "must be a string"
	case !present:
		return "", ""
	case strings.IndexByte(s, 0) >= 0:
		return "", "must not contain NUL characters"
	}
	d.payload[name] = s
	return strings.TrimSpace(s), ""
}

func decodeName(d *decoding, raw json.RawMessage) string {
	if isNull(raw) {
		return "is required"
	}
	s, msg := d.optionalString("name", raw)
	switch {
	case msg != "":
		return msg
	case s == "":
		return "must not be blank"
	case utf8.RuneCountInString(s) > MaxNameChars:
		return fmt.Sprintf("must be at most %d characters", MaxNameChars)
	}
	d.l.Name = s
	return ""
}

func decodeEmail(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("email", raw)
	if msg != "" || s == "" {
		return msg
	}
	norm, msg := normalizeEmail(s)
	if msg != "" {
		return msg
	}
	d.l.Email, d.l.EmailNorm = s, norm
	return ""
}

func decodeAgentEmail(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("agent_email", raw)
	if msg != "" || s == "" {
		return msg
	}
	if _, msg := normalizeEmail(s); msg != "" {
		return msg
	}
	d.l.AgentEmail = s
	return ""
}

func decodePhone(d *decoding, raw json.RawMessage) string {
	return d.phoneNumber("phone", raw, &d.l.Phone, &d.l.PhoneE164)
}

func decodeMobile(d *decoding, raw json.RawMessage) string {
	return d.phoneNumber("mobile", raw, &d.l.Mobile, &d.l.MobileE164)
}

// phoneNumber decodes an optional phone number into number and e164.
func (d *decoding) phoneNumber(name string, raw json.RawMessage, number, e164 *string) string {
	s, msg := d.optionalString(name, raw)
	if msg != "" || s == "" {
		return msg
	}
	norm, msg := normalizePhone(s)
	if msg != "" {
		return msg
	}
	*number, *e164 = s, norm
	return ""
}

func decodeMessage(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("message", raw)
	if msg != "" || s == "" {
		return msg
	}
	full := d.payload["message"].(string)
	if utf8.RuneCountInString(full) > MaxMessageChars {
		return fmt.Sprintf("must be at most %d characters", MaxMessageChars)
	}
	d.l.Message = full
	return ""
}

func decodeType(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("type", raw)
	if msg != "" || s == "" {
		return msg
	}
	for _, t := range types {
		if s == string(t) {
			d.l.Type = t
			return ""
		}
	}
	return "must be one of inquiry, appraisal, rental_application, general"
}

func decodePriority(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("priority", raw)
	if msg != "" || s == "" {
		return msg
	}
	for _, p := range priorities {
		if s == string(p) {
			d.l.Priority = p
			return ""
		}
	}
	return "must be one of hot, warm, cold"
}

func decodeListingRef(d *decoding, raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	if !isIntegerLiteral(raw) {
		return "must be an integer"
	}
	ref, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || ref <= 0 {
		return "must be a positive integer"
	}
	d.l.ListingRef = ref
	d.payload["listing_ref"] = json.Number(strconv.FormatInt(ref, 10))
	return ""
}

// isIntegerLiteral reports whether raw is a JSON number without fraction or
// exponent.
func isIntegerLiteral(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func decodeListingID(d *decoding, raw json.RawMessage) string {
	s, msg := d.optionalString("listing_id", raw)
	if msg != "" || s == "" {
		return msg
	}
	if utf8.RuneCountInString(s) > MaxListingIDChars {
		return fmt.Sprintf("must be at most %d characters", MaxListingIDChars)
	}
	d.l.ListingID = s
	return ""
}

func decodeMetadataField(d *decoding, raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	canonical, values, msg := decodeMetadata(raw)
	if msg != "" {
		return msg
	}
	d.l.Metadata = canonical
	d.payload["metadata"] = values
	return ""
}

// encodePayload writes the fields as received in canonical JSON: the
// fields in fieldOrder, metadata keys sorted, no HTML escaping.
func encodePayload(fields map[string]any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, name := range fieldOrder {
		v, ok := fields[name]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(encodeCanonical(name))
		b.WriteByte(':')
		b.Write(encodeCanonical(v))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeCanonical marshals v without HTML escaping and without the
// encoder's trailing newline. v is always encodable (strings, json.Number
// values Decode has checked, maps of those, Response).
func encodeCanonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("leads/rules: encode " + err.Error()) // a bug: every value here is encodable
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}
