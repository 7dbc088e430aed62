package model

import "time"

// Collection is the envelope of every list endpoint.
type Collection[T any] struct {
	Data []T  `json:"data"`
	Meta Meta `json:"meta"`
}

// Meta is a collection's pagination.
type Meta struct {
	Page    int `json:"page"`
	PerPage int `json:"per_page"`
	// Total counts the matches exactly when TotalExact; otherwise it is a
	// lower bound (a listing query counts up to a bound past the page).
	Total      int  `json:"total"`
	TotalExact bool `json:"total_exact"`
	TotalPages int  `json:"total_pages"`
}

// Listing is a listing as the read API serves it. Absent or hidden values
// are null, never 0 or "": the feed's privacy rules have been applied.
type Listing struct {
	ListingRef    int64          `json:"listing_ref"`
	ListingID     string         `json:"listing_id"`
	AgencyID      string         `json:"agency_id"`
	Type          string         `json:"type"`
	Status        string         `json:"status"`
	UnderOffer    bool           `json:"under_offer"`
	Authority     *string        `json:"authority"`
	Category      *string        `json:"category"`
	Headline      *string        `json:"headline"`
	Description   *string        `json:"description"`
	Price         *Price         `json:"price"`
	Rent          *Rent          `json:"rent"`
	Sold          *Sold          `json:"sold"`
	Address       Address        `json:"address"`
	Features      Features       `json:"features"`
	Land          *Land          `json:"land"`
	Building      *Building      `json:"building"`
	Inspections   []Inspection   `json:"inspections"`
	Auction       *Auction       `json:"auction"`
	DateAvailable *string        `json:"date_available"`
	Agents        []ListingAgent `json:"agents"`
	Media         []Media        `json:"media"`
	Featured      bool           `json:"featured"`
	CreatedAt     time.Time      `json:"created_at"`
	ModifiedAt    time.Time      `json:"modified_at"`
}

// Tombstone is what modified_since returns for a withdrawn, off-market or
// deleted listing: enough to unpublish it.
type Tombstone struct {
	ListingRef int64     `json:"listing_ref"`
	ListingID  string    `json:"listing_id"`
	AgencyID   string    `json:"agency_id"`
	Status     string    `json:"status"`
	ModifiedAt time.Time `json:"modified_at"`
}

// Price is a sale listing's price. Amount is null when the feed hides it;
// DisplayText is then the feed's price view or "Contact agent".
type Price struct {
	DisplayText *string  `json:"display_text"`
	Amount      *float64 `json:"amount"`
	ShowAmount  bool     `json:"show_amount"`
}

// Rent is a rental's rent: the weekly figure when the feed gives several.
type Rent struct {
	Amount      *float64 `json:"amount"`
	Period      *string  `json:"period"`
	DisplayText *string  `json:"display_text"`
	Bond        *float64 `json:"bond"`
}

// Sold is a sold listing's price and date, present only when the feed lets
// the sold price be displayed.
type Sold struct {
	Amount *float64 `json:"amount"`
	Date   *string  `json:"date"`
}

// Address is a listing's address; street-level parts are null when the feed
// hides the address, and Formatted is then the suburb (or null).
type Address struct {
	StreetNumber *string `json:"street_number"`
	Street       *string `json:"street"`
	Suburb       *string `json:"suburb"`
	State        *string `json:"state"`
	Postcode     *string `json:"postcode"`
	Country      *string `json:"country"`
	Formatted    *string `json:"formatted"`
	Display      bool    `json:"display"`
}

// Features are a listing's counts and flags.
type Features struct {
	Bedrooms        *int     `json:"bedrooms"`
	Bathrooms       *int     `json:"bathrooms"`
	Ensuites        *int     `json:"ensuites"`
	Toilets         *int     `json:"toilets"`
	Garages         *int     `json:"garages"`
	Carports        *int     `json:"carports"`
	OpenSpaces      *int     `json:"open_spaces"`
	CarSpaces       *int     `json:"car_spaces"`
	LivingAreas     *int     `json:"living_areas"`
	AirConditioning *bool    `json:"air_conditioning"`
	Pool            *bool    `json:"pool"`
	Other           []string `json:"other"`
}

// Land is a listing's land size.
type Land struct {
	Area     *float64 `json:"area"`
	Unit     *string  `json:"unit"`
	Frontage *float64 `json:"frontage"`
}

// Building is a listing's building size and energy rating.
type Building struct {
	Area         *float64 `json:"area"`
	Unit         *string  `json:"unit"`
	EnergyRating *float64 `json:"energy_rating"`
}

// Inspection is an open-for-inspection time.
type Inspection struct {
	StartsAt time.Time  `json:"starts_at"`
	EndsAt   *time.Time `json:"ends_at"`
}

// Auction is a listing's auction.
type Auction struct {
	Date *time.Time `json:"date"`
}

// ListingAgent is an agent as listed on a listing.
type ListingAgent struct {
	AgentID string  `json:"agent_id"`
	Name    string  `json:"name"`
	Email   *string `json:"email"`
	Phones  Phones  `json:"phones"`
}

// Phones are an agent's numbers.
type Phones struct {
	Mobile *string `json:"mobile"`
	Office *string `json:"office"`
}

// Agent is an agent of a site.
type Agent struct {
	AgentID      string  `json:"agent_id"`
	Name         string  `json:"name"`
	Email        *string `json:"email"`
	Phones       Phones  `json:"phones"`
	PhotoURL     *string `json:"photo_url"`
	ListingCount int     `json:"listing_count"`
}

// Media is a media object: media_id is stable per listing, kind and slot.
type Media struct {
	MediaID    string    `json:"media_id"`
	ListingRef int64     `json:"listing_ref,omitempty"`
	ListingID  string    `json:"listing_id,omitempty"`
	Kind       string    `json:"kind"`
	URL        string    `json:"url"`
	Position   int       `json:"position"`
	ModifiedAt time.Time `json:"modified_at"`
}

// Field describes one filterable or sortable field for building a search
// form.
type Field struct {
	Name       string `json:"name"`
	Label      string `json:"label"`
	Type       string `json:"type"`
	Filterable bool   `json:"filterable"`
	Sortable   bool   `json:"sortable"`
	// Params are the query parameters that filter on the field.
	Params []string     `json:"params"`
	Values []FieldValue `json:"values"`
	Min    *float64     `json:"min,omitempty"`
	Max    *float64     `json:"max,omitempty"`
}

// FieldValue is one value of an enum field, with how many current listings
// of the site have it (null for values the API allows but does not count).
type FieldValue struct {
	Value string `json:"value"`
	Count *int   `json:"count"`
}

// StatsSummary is a site's summary.
type StatsSummary struct {
	Listings    ListingStats `json:"listings"`
	Leads       LeadStats    `json:"leads"`
	AgentCount  int          `json:"agent_count"`
	GeneratedAt time.Time    `json:"generated_at"`
}

// ListingStats counts listings; Price covers current sale listings whose
// price the feed lets be shown.
type ListingStats struct {
	Total    int            `json:"total"`
	ByStatus map[string]int `json:"by_status"`
	ByType   map[string]int `json:"by_type"`
	Price    PriceStats     `json:"price"`
}

// PriceStats is the range and median of a set of prices; null when empty.
type PriceStats struct {
	Count  int      `json:"count"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
	Median *float64 `json:"median"`
}

// LeadStats counts leads received in the last 7 and 30 days, by type.
type LeadStats struct {
	Last7Days  map[string]int `json:"last_7_days"`
	Last30Days map[string]int `json:"last_30_days"`
}
