package ingest

// Counts are the outcome of an import, listing by listing.
type Counts struct {
	// Created: listings new to the site.
	Created int `json:"created"`
	// Updated: listings the feed changed.
	Updated int `json:"updated"`
	// Unchanged: records identical to what was last applied.
	Unchanged int `json:"unchanged"`
	// Deleted: listings the feed deleted (status deleted).
	Deleted int `json:"deleted"`
	// Skipped: records older than the stored modTime, and deletes of
	// listings the site never had.
	Skipped int `json:"skipped"`
	// Errors: listings that could not be read or stored. The counts add up
	// to the feed's listings.
	Errors int `json:"errors"`
}

// ListingError is one listing that could not be imported, or that was
// imported without the media objects its message names (a URL that is not
// absolute http or https with a host).
type ListingError struct {
	// ListingID is "AGENTID:UNIQUEID" when the feed gave them.
	ListingID string `json:"listing_id"`
	Line      int    `json:"line"`
	Message   string `json:"message"`
}

// MaxErrors bounds Result.Errors; Counts.Errors still counts every listing
// that could not be imported.
const MaxErrors = 1000

// Result is what Import reports.
type Result struct {
	Counts Counts `json:"counts"`
	// Errors lists the listings that could not be imported (Counts.Errors)
	// and those stored without some of their media, whose message begins
	// "listing imported without ".
	Errors []ListingError `json:"errors"`
}
