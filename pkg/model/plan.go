// Package model holds the wire types and small value types that the origin,
// the edge and the Go client share: plans, sites, and the JSON shapes of
// API responses (the internal API's are in pkg/internalapi). It imports no adapter (no fasthttp, no
// pgx).
package model

import "fmt"

// Plan is a site's subscription plan; it sets the site's rate limit.
type Plan string

// The plans of the seed specification.
const (
	Starter      Plan = "starter"
	Professional Plan = "professional"
	Enterprise   Plan = "enterprise"
)

// Plans lists every plan, cheapest first.
var Plans = []Plan{Starter, Professional, Enterprise}

// ParsePlan accepts a plan's name in lower case.
func ParsePlan(s string) (Plan, error) {
	for _, p := range Plans {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown plan %q (want starter, professional or enterprise)", s)
}

// Limit is the plan's requests per minute, shared by all keys of a site; 0
// means unlimited. An unknown plan gets the Starter limit: it fails closed.
func (p Plan) Limit() int {
	switch p {
	case Enterprise:
		return 0
	case Professional:
		return 600
	default:
		return 60
	}
}
