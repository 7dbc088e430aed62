package reaxmlgen

// suburb is one row of the built-in suburb table. tier 1 is the most
// expensive, 4 the least; prices and rents follow it.
type suburb struct {
	name, state, postcode, council string
	tier                           int
}

var suburbs = []suburb{
	{"Bondi", "NSW", "2026", "Waverley", 1},
	{"Manly", "NSW", "2095", "Northern Beaches", 1},
	{"Paddington", "NSW", "2021", "Woollahra", 1},
	{"Mosman", "NSW", "2088", "Mosman", 1},
	{"Newtown", "NSW", "2042", "Inner West", 2},
	{"Surry Hills", "NSW", "2010", "Sydney", 2},
	{"Randwick", "NSW", "2031", "Randwick", 2},
	{"Chatswood", "NSW", "2067", "Willoughby", 2},
	{"Cronulla", "NSW", "2230", "Sutherland", 2},
	{"Parramatta", "NSW", "2150", "Parramatta", 3},
	{"Wollongong", "NSW", "2500", "Wollongong", 3},
	{"Newcastle", "NSW", "2300", "Newcastle", 3},
	{"Penrith", "NSW", "2750", "Penrith", 4},
	{"Blacktown", "NSW", "2148", "Blacktown", 4},
	{"Byron Bay", "NSW", "2481", "Byron", 1},
	{"Toorak", "VIC", "3142", "Stonnington", 1},
	{"Hawthorn", "VIC", "3122", "Boroondara", 1},
	{"Richmond", "VIC", "3121", "Yarra", 2},
	{"Fitzroy", "VIC", "3065", "Yarra", 2},
	{"Brunswick", "VIC", "3056", "Merri-bek", 2},
	{"St Kilda", "VIC", "3182", "Port Phillip", 2},
	{"Williamstown", "VIC", "3016", "Hobsons Bay", 2},
	{"Box Hill", "VIC", "3128", "Whitehorse", 2},
	{"Footscray", "VIC", "3011", "Maribyrnong", 3},
	{"Frankston", "VIC", "3199", "Frankston", 3},
	{"Geelong", "VIC", "3220", "Greater Geelong", 3},
	{"Ballarat Central", "VIC", "3350", "Ballarat", 4},
	{"Bendigo", "VIC", "3550", "Greater Bendigo", 4},
	{"New Farm", "QLD", "4005", "Brisbane", 1},
	{"Noosa Heads", "QLD", "4567", "Noosa", 1},
	{"Paddington", "QLD", "4064", "Brisbane", 2},
	{"Indooroopilly", "QLD", "4068", "Brisbane", 2},
	{"Surfers Paradise", "QLD", "4217", "Gold Coast", 2},
	{"Southport", "QLD", "4215", "Gold Coast", 3},
	{"Cairns City", "QLD", "4870", "Cairns", 3},
	{"Townsville City", "QLD", "4810", "Townsville", 4},
	{"Toowoomba City", "QLD", "4350", "Toowoomba", 4},
	{"Cottesloe", "WA", "6011", "Cottesloe", 1},
	{"Subiaco", "WA", "6008", "Subiaco", 1},
	{"Fremantle", "WA", "6160", "Fremantle", 2},
	{"Scarborough", "WA", "6019", "Stirling", 2},
	{"Joondalup", "WA", "6027", "Joondalup", 3},
	{"Mandurah", "WA", "6210", "Mandurah", 4},
	{"Norwood", "SA", "5067", "Norwood Payneham St Peters", 2},
	{"Glenelg", "SA", "5045", "Holdfast Bay", 2},
	{"Unley", "SA", "5061", "Unley", 2},
	{"Prospect", "SA", "5082", "Prospect", 3},
	{"Mount Barker", "SA", "5251", "Mount Barker", 4},
	{"Battery Point", "TAS", "7004", "Hobart", 1},
	{"Sandy Bay", "TAS", "7005", "Hobart", 2},
	{"Launceston", "TAS", "7250", "Launceston", 4},
	{"Kingston", "ACT", "2604", "ACT", 2},
	{"Braddon", "ACT", "2612", "ACT", 2},
	{"Belconnen", "ACT", "2617", "ACT", 3},
	{"Gungahlin", "ACT", "2912", "ACT", 3},
	{"Parap", "NT", "0820", "Darwin", 3},
	{"Darwin City", "NT", "0800", "Darwin", 3},
	{"Alice Springs", "NT", "0870", "Alice Springs", 4},
	{"Orange", "NSW", "2800", "Orange", 4},
	{"Mudgee", "NSW", "2850", "Mid-Western", 4},
}

var streetNames = []string{
	"Victoria", "George", "Elizabeth", "King", "Queen", "William", "Church", "High",
	"Station", "Park", "Beach", "Ocean", "Bay", "Hill", "Railway", "Albert",
	"Wattle", "Banksia", "Acacia", "Grevillea", "Eucalyptus", "Jacaranda", "Lillypilly",
	"Waratah", "Boronia", "Macquarie", "Hume", "Flinders", "Sturt", "Lachlan",
}

var streetTypes = []string{
	"Street", "Street", "Road", "Avenue", "Parade", "Crescent", "Lane", "Place",
	"Drive", "Terrace", "Close", "Court",
}

var firstNames = []string{
	"Olivia", "Jack", "Charlotte", "Noah", "Amelia", "William", "Isla", "Oliver",
	"Mia", "Thomas", "Ava", "James", "Grace", "Lachlan", "Chloe", "Cooper",
	"Zoe", "Harrison", "Ruby", "Mitchell", "Sienna", "Riley", "Matilda", "Hamish",
}

var lastNames = []string{
	"Smith", "Jones", "Williams", "Brown", "Wilson", "Taylor", "Nguyen", "Johnson",
	"Martin", "White", "Anderson", "Walker", "Thompson", "Kelly", "Ryan", "Murphy",
	"Chen", "Patel", "O'Brien", "Campbell", "Stewart", "MacDonald", "Russo", "Papadopoulos",
}

var headlineOpeners = []string{
	"Stunning", "Light-filled", "Renovated", "Character-filled", "Architect-designed",
	"Immaculate", "Spacious", "Low-maintenance", "Elevated", "Family-sized", "Charming",
	"Contemporary", "Tightly held", "Rare",
}

var headlineNouns = map[string][]string{
	"home":       {"family home", "Federation home", "Californian bungalow", "townhouse", "terrace", "villa", "apartment", "weatherboard cottage"},
	"land":       {"building block", "corner allotment", "elevated block", "land parcel"},
	"rural":      {"grazing property", "lifestyle acreage", "hobby farm", "cropping country"},
	"commercial": {"office suite", "warehouse", "retail shopfront", "showroom", "medical suite"},
	"business":   {"café", "bakery", "hair salon", "mechanical workshop", "bottle shop", "gym"},
}

var headlineHooks = []string{
	"moments from the beach", "close to cafés and transport", "with leafy outlook",
	"in a quiet pocket", "walk to schools", "with room to grow", "ready to move in",
	"with district views", "on a prized street",
}

var descriptionSentences = []string{
	"Flooded with natural light, the open-plan living and dining area flows to a private entertaining deck.",
	"The updated kitchen features stone benchtops, gas cooking and a walk-in pantry.",
	"Bedrooms are generously sized, each with built-in robes.",
	"A north-facing backyard offers space for children and pets to play.",
	"Ducted air conditioning keeps the home comfortable all year round.",
	"Off-street parking and a lock-up garage with internal access add convenience.",
	"Set on a tree-lined street, it is a short stroll to shops, parks and public transport.",
	"Polished timber floors and high ceilings give the home a sense of space.",
	"The main bedroom enjoys a walk-in robe and a private ensuite.",
	"Solar panels and a rainwater tank keep running costs low.",
	"Zoned for popular local schools and close to the university.",
	"An ideal opportunity for first home buyers, downsizers or investors alike.",
	"Inspection is highly recommended: homes like this are rarely offered.",
}

var commercialSentences = []string{
	"The tenancy offers a flexible open-plan layout with a kitchenette and amenities.",
	"Excellent exposure to passing traffic with generous signage opportunities.",
	"On-site parking is available for staff and visitors.",
	"Zoned for a wide range of commercial uses, subject to council approval.",
	"Established clientele and trained staff stay with the business.",
	"Full financials are available to qualified buyers on request.",
}

var ruralSentences = []string{
	"Well fenced into several paddocks with reliable water from dams and a bore.",
	"Improvements include a machinery shed, shearing shed and cattle yards.",
	"Rich basalt soils suit cropping as well as grazing.",
	"A comfortable homestead with verandahs on three sides overlooks the valley.",
}

var residentialCategories = []string{"House", "Unit", "Townhouse", "Villa", "Apartment", "Terrace", "Flat", "Studio"}
var commercialCategories = []string{"Offices", "Retail", "Industrial/Warehouse", "Showrooms/Bulky Goods", "Medical/Consulting", "Hotel/Leisure"}
var businessCategories = [][2]string{
	{"Food/Hospitality", "Cafe/Coffee Shop"}, {"Food/Hospitality", "Bakery"},
	{"Beauty/Health", "Hairdresser"}, {"Automotive", "Mechanical Repair"},
	{"Retail", "Bottle Shop"}, {"Leisure/Entertainment", "Gym/Fitness"},
}
var ruralCategories = []string{"Cropping", "Dairy", "Farmlet", "Horticulture", "Livestock", "Viticulture", "MixedFarming", "Lifestyle"}
var landCategories = []string{"Residential", "Commercial"}
var holidayCategories = []string{"Apartment", "House", "Cottage", "Lodge", "Villa", "Unit"}
var flagFeatures = []string{"airConditioning", "alarmSystem", "pool", "balcony", "deck", "courtyard", "shed", "fullyFenced", "dishwasher", "builtInRobes", "study", "remoteGarage"}
var otherFeatures = []string{"solar panels", "rainwater tank", "walk-in pantry", "butler's pantry", "wine cellar", "home office", "outdoor kitchen", "veggie garden"}
