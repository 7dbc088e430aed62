package rules

import (
	"encoding/json"
	"strings"
)

// Type is what an enquiry is about. The zero value is not valid; a request
// without a type gets TypeGeneral.
type Type string

// The lead types of the API.
const (
	TypeInquiry           Type = "inquiry"
	TypeAppraisal         Type = "appraisal"
	TypeRentalApplication Type = "rental_application"
	TypeGeneral           Type = "general"
)

var types = []Type{TypeInquiry, TypeAppraisal, TypeRentalApplication, TypeGeneral}

// Priority is how urgent a lead is. A request without one gets
// PriorityWarm.
type Priority string

// The lead priorities of the API.
const (
	PriorityHot  Priority = "hot"
	PriorityWarm Priority = "warm"
	PriorityCold Priority = "cold"
)

var priorities = []Priority{PriorityHot, PriorityWarm, PriorityCold}

// StatusNew is the status of a lead when it is created.
const StatusNew = "new"

// Limits of the request body's fields (API.md, "Lead submission").
const (
	MaxNameChars      = 200
	MaxEmailBytes     = 254
	MaxPhoneChars     = 64
	MaxMessageChars   = 5000
	MaxListingIDChars = 200
	MaxMetadataKeys   = 50
	MaxMetadataKey    = 64      // characters of one key
	MaxMetadataBytes  = 8 << 10 // the canonical encoding of the whole object
)

// Lead is a validated submission, normalised for storage and matching. Only
// Decode makes one; every string field is free of NUL characters, valid
// UTF-8 and within its limit. An empty string means "not given".
type Lead struct {
	// Name is the enquirer's name, trimmed; never empty.
	Name string
	// Email is the address as given (trimmed); EmailNorm is it lower-cased,
	// the form duplicates are matched on.
	Email, EmailNorm string
	// Phone and Mobile are the numbers as given (trimmed); PhoneE164 and
	// MobileE164 are them in E.164 (+61…), the form duplicates are matched on.
	Phone, PhoneE164   string
	Mobile, MobileE164 string
	// Message is the enquiry text as given; "" when absent or blank.
	Message string
	// Type defaults to TypeGeneral, Priority to PriorityWarm.
	Type     Type
	Priority Priority
	// ListingRef is the listing_ref given, 0 when none.
	ListingRef int64
	// ListingID is the listing_id given (trimmed): a REAXML uniqueID or
	// AGENCYID:UNIQUEID.
	ListingID string
	// AgentEmail is the agent_email given (trimmed).
	AgentEmail string
	// Metadata is the canonical JSON of the metadata object (keys sorted),
	// "{}" when none was given.
	Metadata json.RawMessage
	// Payload is the canonical JSON of the request as received: each field
	// that was given and not null, with its value as sent. It is what is
	// stored with every submission, and decodes to this same Lead.
	Payload json.RawMessage
}

// HasContact reports whether the lead has an e-mail address or a phone
// number; Decode never returns a lead without one.
func (l *Lead) HasContact() bool {
	return l.EmailNorm != "" || l.PhoneE164 != "" || l.MobileE164 != ""
}

// ListingIDParts splits ListingID in the qualified form AGENCYID:UNIQUEID at
// its first colon; ok is false when it has no colon or either part is empty.
func (l *Lead) ListingIDParts() (agencyID, uniqueID string, ok bool) {
	agencyID, uniqueID, ok = strings.Cut(l.ListingID, ":")
	return agencyID, uniqueID, ok && agencyID != "" && uniqueID != ""
}

// ResponseStatus is the HTTP status of a stored submission's answer, 201
// Created, whether the submission made a lead or was attached to an
// earlier one; an idempotent replay repeats it with the stored Response.
const ResponseStatus = 201

// Response is the body of a successful submission: exactly these four
// fields. AssignedTo is null when nobody was assigned.
type Response struct {
	LeadID     int64   `json:"lead_id"`
	Status     string  `json:"status"`
	Duplicate  bool    `json:"duplicate"`
	AssignedTo *string `json:"assigned_to"`
}

// Encode returns the response body, ending in a newline. The same response
// always encodes to the same bytes, so an idempotent replay is byte for
// byte the first answer.
func (r Response) Encode() []byte {
	return append(encodeCanonical(r), '\n')
}
