package model

import "time"

// ListingPerformance is a listing's views, unique visitors and leads per
// day over a period (GET /v1/sites/{site}/stats/listings/{listing}). Days
// are dates in the site's time zone, every day of the period listed, the
// days without views or leads included with zeros.
type ListingPerformance struct {
	ListingRef int64  `json:"listing_ref"`
	ListingID  string `json:"listing_id"`
	AgencyID   string `json:"agency_id"`
	// Status is the listing's status now; "deleted" for a listing no longer
	// served, whose history stays.
	Status string `json:"status"`
	// From and To are the period's first and last dates (YYYY-MM-DD),
	// inclusive; Timezone the site's IANA time zone they are dates in.
	From     string      `json:"from"`
	To       string      `json:"to"`
	Timezone string      `json:"timezone"`
	Days     []ViewDay   `json:"days"`
	Totals   ViewFigures `json:"totals"`
	// GeneratedAt is to the minute, in the site's time zone.
	GeneratedAt time.Time `json:"generated_at"`
}

// ViewFigures are the counts of a day or a period. UniqueVisitors of a
// period is the sum of its days' (a visitor who came back another day
// counts again). Leads are the leads naming the listing, spam excluded.
// LeadsPer100Views is Leads × 100 / Views, rounded to two decimals; null
// without views.
type ViewFigures struct {
	Views            int64    `json:"views"`
	UniqueVisitors   int64    `json:"unique_visitors"`
	Leads            int64    `json:"leads"`
	LeadsPer100Views *float64 `json:"leads_per_100_views"`
}

// ViewDay is one day of a ListingPerformance.
type ViewDay struct {
	Date string `json:"date"`
	ViewFigures
}

// TopListings is GET /v1/sites/{site}/stats/listings: the site's listings
// with the most views (or visitors, or leads) over a period.
type TopListings struct {
	Data []TopListing    `json:"data"`
	Meta TopListingsMeta `json:"meta"`
}

// TopListing is one listing of TopListings and its figures over the period.
type TopListing struct {
	ListingRef int64   `json:"listing_ref"`
	ListingID  string  `json:"listing_id"`
	AgencyID   string  `json:"agency_id"`
	Status     string  `json:"status"`
	Headline   *string `json:"headline"`
	ViewFigures
}

// TopListingsMeta says what TopListings covers.
type TopListingsMeta struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Timezone string `json:"timezone"`
	Sort     string `json:"sort"`
	Limit    int    `json:"limit"`
	// GeneratedAt is to the minute, in the site's time zone.
	GeneratedAt time.Time `json:"generated_at"`
}

// Per100 is leads per 100 views rounded to two decimals; nil without views.
func Per100(leads, views int64) *float64 {
	if views <= 0 {
		return nil
	}
	v := float64(int64(float64(leads)*10000/float64(views)+0.5)) / 100
	return &v
}
