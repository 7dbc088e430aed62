package reaxml

import "time"

// Kind is the REAXML element a listing comes in, which is its listing type.
type Kind string

// The eight listing elements of REAXML.
const (
	KindResidential    Kind = "residential"
	KindRental         Kind = "rental"
	KindHolidayRental  Kind = "holidayRental"
	KindLand           Kind = "land"
	KindRural          Kind = "rural"
	KindCommercial     Kind = "commercial"
	KindCommercialLand Kind = "commercialLand"
	KindBusiness       Kind = "business"
)

// Kinds lists every [Kind] in a stable order.
var Kinds = []Kind{
	KindResidential, KindRental, KindHolidayRental, KindLand,
	KindRural, KindCommercial, KindCommercialLand, KindBusiness,
}

// Valid reports whether k is one of the eight REAXML listing elements.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Status is a listing's status attribute, normalised to lower case.
type Status string

// The REAXML statuses. A listing element without a status attribute is
// [StatusCurrent].
const (
	StatusCurrent   Status = "current"
	StatusSold      Status = "sold"
	StatusLeased    Status = "leased"
	StatusWithdrawn Status = "withdrawn"
	StatusOffmarket Status = "offmarket"
	StatusDeleted   Status = "deleted"
)

// Listing is one listing element of a feed.
//
// Kind, AgentID, UniqueID, Status, ModTime and Line are always set (ModTime
// is zero when the feed gives no modTime). Every other field follows the
// absent-versus-empty rule of the package documentation: nil means the feed
// did not mention it.
//
// Times are in the decoder's [Options.Location]. A Listing is a plain value:
// the decoder does not keep or reuse it.
type Listing struct {
	Kind     Kind      `json:"kind"`
	AgentID  string    `json:"agentID"`
	UniqueID string    `json:"uniqueID"`
	Status   Status    `json:"status"`
	ModTime  time.Time `json:"modTime,omitzero"`
	// Line is the line of the feed on which the listing element starts.
	Line int `json:"line"`

	// Authority is authority (or commercialAuthority) value=, e.g. "exclusive", "auction".
	Authority *string `json:"authority,omitzero"`
	// Exclusivity is exclusivity value= (commercial and business: "exclusive", "open").
	Exclusivity *string `json:"exclusivity,omitzero"`
	// CommercialListingType is commercialListingType value= ("sale", "lease", "both").
	CommercialListingType *string `json:"commercialListingType,omitzero"`
	UnderOffer            *bool   `json:"underOffer,omitzero"`
	IsMultiple            *bool   `json:"isMultiple,omitzero"`
	IsHomeLandPackage     *bool   `json:"isHomeLandPackage,omitzero"`
	// NewConstruction is newConstruction, or the legacy buildingDetails/newlyBuilt.
	NewConstruction *bool `json:"newConstruction,omitzero"`

	// Agents are the listingAgent elements in id order, empty agents and
	// repeats of an earlier agent dropped. Non-nil and empty when the feed
	// sent only empty listingAgent elements (the listing has no agent).
	Agents []Agent `json:"agents,omitzero"`

	Headline    *string `json:"headline,omitzero"`
	Description *string `json:"description,omitzero"`

	Price     *Price  `json:"price,omitzero"`
	PriceView *string `json:"priceView,omitzero"`
	// Rents holds every rent element in feed order (a feed may give a weekly
	// and a monthly figure).
	Rents          []Rent          `json:"rents,omitzero"`
	Bond           *Charge         `json:"bond,omitzero"`
	DateAvailable  *time.Time      `json:"dateAvailable,omitzero"`
	CommercialRent *CommercialRent `json:"commercialRent,omitzero"`
	Outgoings      *Charge         `json:"outgoings,omitzero"`
	Return         *Charge         `json:"return,omitzero"`
	Takings        *Charge         `json:"takings,omitzero"`
	BusinessLease  *Charge         `json:"businessLease,omitzero"`
	Franchise      *bool           `json:"franchise,omitzero"`
	Terms          *string         `json:"terms,omitzero"`
	// CurrentLeaseEndDate points at the zero time when the element is empty.
	CurrentLeaseEndDate *time.Time `json:"currentLeaseEndDate,omitzero"`
	FurtherOptions      *string    `json:"furtherOptions,omitzero"`
	CouncilRates        *string    `json:"councilRates,omitzero"`
	Zone                *string    `json:"zone,omitzero"`
	ParkingComments     *string    `json:"parkingComments,omitzero"`
	// Highlights are the commercial highlight texts, empty ones dropped.
	Highlights []string `json:"highlights,omitzero"`

	Address      *Address `json:"address,omitzero"`
	Municipality *string  `json:"municipality,omitzero"`
	Estate       *Estate  `json:"estate,omitzero"`

	// Categories are the category name= values (residential, rental).
	Categories           []string           `json:"categories,omitzero"`
	CommercialCategories []string           `json:"commercialCategories,omitzero"`
	BusinessCategories   []BusinessCategory `json:"businessCategories,omitzero"`
	RuralCategories      []string           `json:"ruralCategories,omitzero"`
	LandCategories       []string           `json:"landCategories,omitzero"`
	HolidayCategories    []string           `json:"holidayCategories,omitzero"`

	Features        *Features        `json:"features,omitzero"`
	RuralFeatures   *RuralFeatures   `json:"ruralFeatures,omitzero"`
	EcoFriendly     map[string]bool  `json:"ecoFriendly,omitzero"`
	Allowances      *Allowances      `json:"allowances,omitzero"`
	LandDetails     *LandDetails     `json:"landDetails,omitzero"`
	BuildingDetails *BuildingDetails `json:"buildingDetails,omitzero"`

	// Inspections is non-nil and empty for an empty inspectionTimes element
	// (the listing has no inspections any more).
	Inspections []Inspection `json:"inspections,omitzero"`
	Auction     *Auction     `json:"auction,omitzero"`
	Sold        *SoldDetails `json:"sold,omitzero"`

	// ExternalLinks are externalLink href values, URL-decoded when the feed
	// URL-encoded them. VideoLinks are videoLink href values.
	ExternalLinks []string `json:"externalLinks,omitzero"`
	VideoLinks    []string `json:"videoLinks,omitzero"`

	// Media holds images/img, objects/img|floorplan|document and
	// media/attachment slots in feed order. A slot without a url or file is
	// kept with Delete set: the feed removes what was in that slot.
	Media []Media `json:"media,omitzero"`

	// Extra keeps every element the package does not model, in feed order.
	// An unknown child of a known group is named by its path, e.g.
	// "address/region".
	Extra []Element `json:"extra,omitzero"`
}

// Agent is one listingAgent. Inside an Agent an empty string means the feed
// gave no value; agents are upserted whole.
type Agent struct {
	// Position is the 1-based place of the agent on the listing after
	// sorting by the id attribute.
	Position int `json:"position"`
	// ID is the id attribute as given ("1" … "4"), empty if absent.
	ID string `json:"id,omitzero"`
	// AgentID is an agentID/agentid child, which some CRMs send.
	AgentID     string  `json:"agentID,omitzero"`
	Name        string  `json:"name,omitzero"`
	Email       string  `json:"email,omitzero"`
	Phones      []Phone `json:"phones,omitzero"`
	TwitterURL  string  `json:"twitterURL,omitzero"`
	FacebookURL string  `json:"facebookURL,omitzero"`
	LinkedInURL string  `json:"linkedInURL,omitzero"`
	PhotoURL    string  `json:"photoURL,omitzero"`
}

// PhoneType is the type attribute of a telephone element.
type PhoneType string

// Telephone types. Other values are kept as the feed wrote them.
const (
	PhoneBusinessHours PhoneType = "BH"
	PhoneAfterHours    PhoneType = "AH"
	PhoneMobile        PhoneType = "mobile"
	PhoneUnspecified   PhoneType = ""
)

// Phone is one telephone of an agent.
type Phone struct {
	Type   PhoneType `json:"type,omitzero"`
	Number string    `json:"number"`
}

// Amount is a figure that may be a single value, a range, or both. All nil
// means the element was present with no figure.
type Amount struct {
	Value *float64 `json:"value,omitzero"`
	Min   *float64 `json:"min,omitzero"`
	Max   *float64 `json:"max,omitzero"`
}

// Figure is the amount as one number: the value, else the low end of the
// range, else its high end; nil when a is nil or has no figure.
func (a *Amount) Figure() *float64 {
	switch {
	case a == nil:
		return nil
	case a.Value != nil:
		return a.Value
	case a.Min != nil:
		return a.Min
	default:
		return a.Max
	}
}

// Price is the price element of a sale listing, or the price of soldDetails.
type Price struct {
	Amount
	// Display is the display attribute; nil when absent (REAXML's default is yes).
	Display *bool  `json:"display,omitzero"`
	PlusSAV *bool  `json:"plusSAV,omitzero"`
	Tax     string `json:"tax,omitzero"`
}

// Period is a rent or charge period, normalised: week, month, annual, day,
// night, fortnight, quarter; other values are kept in lower case.
type Period string

// Normalised periods.
const (
	PeriodWeek      Period = "week"
	PeriodFortnight Period = "fortnight"
	PeriodMonth     Period = "month"
	PeriodQuarter   Period = "quarter"
	PeriodAnnual    Period = "annual"
	PeriodDay       Period = "day"
	PeriodNight     Period = "night"
)

// Rent is one rent element (rental, holidayRental).
type Rent struct {
	Amount
	Period  Period `json:"period,omitzero"`
	Display *bool  `json:"display,omitzero"`
	Tax     string `json:"tax,omitzero"`
}

// CommercialRent is commercialRent, with its optional rentPerSquareMetre.
type CommercialRent struct {
	Amount
	Period         Period  `json:"period,omitzero"`
	PlusOutgoings  *bool   `json:"plusOutgoings,omitzero"`
	Tax            string  `json:"tax,omitzero"`
	PerSquareMetre *Amount `json:"perSquareMetre,omitzero"`
}

// Charge is a figure with an optional period and unit: bond, outgoings,
// return (unit "percent"), takings, businessLease.
type Charge struct {
	Amount
	Period Period `json:"period,omitzero"`
	Unit   string `json:"unit,omitzero"`
	Tax    string `json:"tax,omitzero"`
}

// Address is the address element. State is upper case ("VIC"); full state
// names are mapped to their abbreviation.
type Address struct {
	// Display is the address display attribute: false means the street-level
	// parts must not be published.
	Display      *bool   `json:"display,omitzero"`
	Site         *string `json:"site,omitzero"`
	SubNumber    *string `json:"subNumber,omitzero"`
	LotNumber    *string `json:"lotNumber,omitzero"`
	StreetNumber *string `json:"streetNumber,omitzero"`
	Street       *string `json:"street,omitzero"`
	Suburb       *string `json:"suburb,omitzero"`
	// SuburbDisplay is the suburb's own display attribute.
	SuburbDisplay *bool   `json:"suburbDisplay,omitzero"`
	State         *string `json:"state,omitzero"`
	Postcode      *string `json:"postcode,omitzero"`
	Country       *string `json:"country,omitzero"`
}

// Estate is the estate element (land and commercialLand).
type Estate struct {
	Name  *string `json:"name,omitzero"`
	Stage *string `json:"stage,omitzero"`
}

// BusinessCategory is one businessCategory with its sub-categories.
type BusinessCategory struct {
	ID            string   `json:"id,omitzero"`
	Name          string   `json:"name"`
	SubCategories []string `json:"subCategories,omitzero"`
}

// Features is the features element (and a listing-level carSpaces).
// An empty count element reads as absent.
type Features struct {
	Bedrooms *int `json:"bedrooms,omitzero"`
	// Studio is set when bedrooms is "Studio"; Bedrooms is then 0.
	Studio      bool `json:"studio,omitzero"`
	Bathrooms   *int `json:"bathrooms,omitzero"`
	Ensuites    *int `json:"ensuites,omitzero"`
	Toilets     *int `json:"toilets,omitzero"`
	Garages     *int `json:"garages,omitzero"`
	Carports    *int `json:"carports,omitzero"`
	OpenSpaces  *int `json:"openSpaces,omitzero"`
	LivingAreas *int `json:"livingAreas,omitzero"`
	CarSpaces   *int `json:"carSpaces,omitzero"`
	// Flags are the yes/no features by element name ("airConditioning",
	// "pool", …). A count above 1 reads as yes.
	Flags map[string]bool `json:"flags,omitzero"`
	// Types are type attributes by element name ("pool": "inground",
	// "heating": "gas").
	Types map[string]string `json:"types,omitzero"`
	// OtherFeatures is otherFeatures split at commas, trimmed, empty items dropped.
	OtherFeatures []string `json:"otherFeatures,omitzero"`
}

// RuralFeatures is the ruralFeatures element: free text per topic.
type RuralFeatures struct {
	Fencing          *string `json:"fencing,omitzero"`
	AnnualRainfall   *string `json:"annualRainfall,omitzero"`
	SoilTypes        *string `json:"soilTypes,omitzero"`
	Improvements     *string `json:"improvements,omitzero"`
	CouncilRates     *string `json:"councilRates,omitzero"`
	Irrigation       *string `json:"irrigation,omitzero"`
	CarryingCapacity *string `json:"carryingCapacity,omitzero"`
	Services         *string `json:"services,omitzero"`
}

// Allowances is the allowances element of rentals. Smokers also reads the
// "smoker" spelling.
type Allowances struct {
	PetFriendly *bool `json:"petFriendly,omitzero"`
	Furnished   *bool `json:"furnished,omitzero"`
	Smokers     *bool `json:"smokers,omitzero"`
}

// Area is a land or building area with its unit, normalised to one of
// square (100 sq ft), squareMeter, acre, hectare, squareFeet; other units
// are kept as written.
type Area struct {
	Amount
	Unit string `json:"unit,omitzero"`
	// Of is the building area's of attribute ("total", "floor", …).
	Of string `json:"of,omitzero"`
}

// Measure is a length with its unit (frontage).
type Measure struct {
	Value *float64 `json:"value,omitzero"`
	Unit  string   `json:"unit,omitzero"`
}

// Depth is one depth element; a feed may give one per side.
type Depth struct {
	Measure
	Side string `json:"side,omitzero"`
}

// LandDetails is the landDetails element.
type LandDetails struct {
	Area      *Area    `json:"area,omitzero"`
	Frontage  *Measure `json:"frontage,omitzero"`
	Depths    []Depth  `json:"depths,omitzero"`
	CrossOver *string  `json:"crossOver,omitzero"`
}

// BuildingDetails is the buildingDetails element.
type BuildingDetails struct {
	Area         *Area    `json:"area,omitzero"`
	EnergyRating *float64 `json:"energyRating,omitzero"`
}

// Inspection is one open-for-inspection time. EndsAt is zero when the feed
// gives no end time.
type Inspection struct {
	StartsAt time.Time `json:"startsAt"`
	EndsAt   time.Time `json:"endsAt,omitzero"`
}

// Auction is the auction element. Date is zero for an empty element (the
// auction was called off).
type Auction struct {
	Date time.Time `json:"date,omitzero"`
}

// SoldDetails is soldDetails. Price.Display false means the sold price must
// not be published. Date is zero when the feed gives none.
type SoldDetails struct {
	Price *Price    `json:"price,omitzero"`
	Date  time.Time `json:"date,omitzero"`
}

// MediaKind says which element a media slot came from.
type MediaKind string

// Media kinds.
const (
	MediaImage      MediaKind = "image"      // images/img, objects/img
	MediaFloorplan  MediaKind = "floorplan"  // objects/floorplan
	MediaDocument   MediaKind = "document"   // objects/document
	MediaAttachment MediaKind = "attachment" // media/attachment
)

// Media is one media slot. Slot is the id attribute (m, a … z, aa …, or
// 1, 2 … for floorplans). Delete is set, and URL and File are empty, when
// the feed clears the slot.
type Media struct {
	Kind        MediaKind `json:"kind"`
	Slot        string    `json:"slot"`
	URL         string    `json:"url,omitzero"`
	File        string    `json:"file,omitzero"`
	Format      string    `json:"format,omitzero"`
	ContentType string    `json:"contentType,omitzero"`
	Usage       string    `json:"usage,omitzero"`
	ModTime     time.Time `json:"modTime,omitzero"`
	Delete      bool      `json:"delete,omitzero"`
}

// Element is an element the package does not model, kept so nothing a feed
// sends is lost. Text is the element's own character data, trimmed.
type Element struct {
	Name     string            `json:"name"`
	Attrs    map[string]string `json:"attrs,omitzero"`
	Text     string            `json:"text,omitzero"`
	Children []Element         `json:"children,omitzero"`
}
