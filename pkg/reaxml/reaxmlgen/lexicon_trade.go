package reaxmlgen

// tradeWords are the word lists for land, rural, commercial and business
// listings, in the order of homeWords (most drawn first).
var tradeWords = map[string][]string{
	"zone": {
		"R2 Low Density Residential", "General Residential", "R3 Medium Density Residential",
		"Neighbourhood Residential", "R1 General Residential", "Low Density Residential",
		"Residential Growth", "RU5 Village", "R5 Large Lot Residential", "Mixed Use",
		"Township", "Rural Living", "Suburban Neighbourhood", "Emerging Community",
	},
	"comzone": {
		"E1 Local Centre", "B4 Mixed Use", "Commercial 1", "IN2 Light Industrial", "E4 General Industrial",
		"B2 Local Centre", "Industrial 1", "MU1 Mixed Use", "E3 Productivity Support", "Commercial 2",
		"B5 Business Development", "IN1 General Industrial", "B6 Enterprise Corridor", "E2 Commercial Centre",
		"Light Industry", "General Industry", "District Centre", "Principal Centre", "Industrial 3",
		"B7 Business Park", "Suburban Activity Centre", "Employment",
	},
	"services": {
		"power", "town water", "sewer", "NBN", "gas", "stormwater", "telephone", "underground power",
		"recycled water", "fibre", "kerb and guttering", "a sealed road",
	},
	"develop": {
		"single dwelling", "duplex", "dual occupancy", "townhouse development", "granny flat",
		"pair of villas", "boutique apartment block", "two-storey family home", "subdivision",
		"secondary dwelling", "terrace development", "seniors living development",
	},
	"estate": {
		"Rise", "Estate", "Grove", "Park", "Heights", "Waters", "Ridge", "Green", "Views", "Gardens",
		"Hill", "Meadows", "Springs", "Lakes", "Fields", "Vale", "Reach", "Quarter",
	},
	"soil": {
		"red basalt", "sandy loam", "chocolate", "black", "red loam", "alluvial", "granite", "clay loam",
		"volcanic", "river flat", "grey clay", "friable", "self-mulching black", "krasnozem", "duplex",
	},
	"pasture": {
		"phalaris", "ryegrass", "clover", "lucerne", "kikuyu", "fescue", "cocksfoot", "native grasses",
		"chicory", "paspalum", "rhodes grass", "buffel grass", "plantain", "brassicas", "millet",
		"setaria", "digit grass", "leucaena", "serradella", "subterranean clover",
	},
	"crop": {
		"wheat", "barley", "canola", "oats", "lupins", "sorghum", "cotton", "chickpeas", "faba beans",
		"lucerne hay", "avocados", "macadamias", "olives", "grapes", "shiraz", "chardonnay", "pinot noir",
		"cabernet sauvignon", "sauvignon blanc", "riesling", "apples", "cherries", "blueberries",
		"citrus", "truffles", "hazelnuts", "almonds", "walnuts", "garlic", "lavender", "hops", "saffron",
	},
	"stock": {
		"cattle", "sheep", "Angus cattle", "Merino sheep", "horses", "Wagyu", "Hereford cattle",
		"Dorper sheep", "Brahman cattle", "Poll Dorset sheep", "Murray Grey cattle", "alpacas", "goats",
		"Charolais cattle", "Droughtmaster cattle", "Santa Gertrudis cattle", "Shorthorn cattle",
		"Simmental cattle", "Border Leicester sheep", "Suffolk sheep", "dairy cows", "Jersey cows",
		"Friesian cows", "Dexter cattle", "Speckle Park cattle", "Highland cattle",
	},
	"water": {
		"dams", "a bore", "a spring-fed creek", "river frontage", "rainwater tanks", "reticulated troughs",
		"a seasonal creek", "a licensed irrigation allocation", "a permanent creek", "a windmill",
		"town water", "a turkey's nest dam", "a solar pump", "a lagoon", "an artesian bore",
	},
	"improvement": {
		"a machinery shed", "a hay shed", "cattle yards", "a shearing shed", "sheep yards", "stables",
		"a workshop", "a round yard", "an arena", "silos", "a loading ramp", "a crush", "a tack room",
		"a woolshed", "a dairy", "a grain storage complex", "a cool room", "a packing shed",
		"workers' cottages", "a horse walker", "a chicken shed", "a glasshouse", "a cellar door",
	},
	"ruralnoun": {
		"grazing property", "lifestyle acreage", "hobby farm", "farm", "cropping property",
		"mixed farming enterprise", "horse property", "rural retreat", "small acreage", "cattle station",
		"vineyard", "orchard", "dairy farm", "bush block", "breeding property", "farmlet",
	},
	"comnoun": {
		"office", "warehouse", "retail shop", "showroom", "factory", "medical suite", "office suite",
		"industrial unit", "shopfront", "strata office", "mixed-use building", "corner shop",
		"workshop", "storage unit", "consulting rooms", "creative studio", "freehold building",
		"development site", "childcare centre", "service station", "pub", "motel",
	},
	"comfeat": {
		"air conditioning", "a kitchenette", "amenities", "an open-plan layout", "private offices",
		"a reception area", "a boardroom", "three-phase power", "a roller door", "high clearance",
		"on-site parking", "a mezzanine", "disabled access", "a lift", "end-of-trip facilities",
		"a loading dock", "secure yard", "hardstand", "data cabling", "a server room", "a gantry crane",
		"container-height roller doors", "shower facilities", "bike storage", "an awning",
		"a 5-star NABERS rating", "ducted air conditioning", "a full fit-out", "a shopfront window",
		"a grease trap", "a commercial exhaust", "a cool room", "skylights", "polished concrete floors",
		"a drive-through", "a wash bay", "B-double access", "a sprinkler system", "a backup generator",
	},
	"tenant": {
		"national tenant", "medical practice", "café", "childcare operator", "pharmacy",
		"accounting firm", "gym", "real estate agency", "engineering firm", "logistics company",
		"government department", "dental practice", "physiotherapy clinic", "bank", "bakery chain",
		"bottle shop", "veterinary clinic", "law firm", "bike shop", "florist", "hair salon", "IT consultancy",
	},
	"traffic": {
		"passing traffic", "high foot traffic", "a busy main road", "the arterial road",
		"more than 30,000 vehicles a day", "a signalised intersection", "the shopping strip",
		"the train station", "the highway",
	},
	"biztype": {
		"café", "restaurant", "bakery", "hair salon", "gym", "mechanical workshop", "bottle shop",
		"takeaway", "beauty salon", "newsagency", "florist", "pharmacy", "childcare centre",
		"cleaning business", "lawn mowing franchise", "pizza shop", "butcher", "fruit shop",
		"coffee van", "dog grooming salon", "laundromat", "motel", "pub", "bike shop", "dry cleaner",
		"tyre shop", "pet store", "bookshop", "juice bar", "sushi bar", "Thai restaurant", "pilates studio",
		"yoga studio", "tattoo studio", "barber shop", "nail bar", "car wash", "caravan park",
		"distillery", "microbrewery", "cellar door", "bed and breakfast", "plant nursery", "post office",
	},
	"equip": {
		"a commercial coffee machine", "display fridges", "a POS system", "commercial ovens",
		"a cool room", "a freezer room", "hoists", "diagnostic equipment", "salon chairs",
		"a La Marzocco espresso machine", "a pizza oven", "a deck oven", "a dough mixer", "gym equipment",
		"a delivery van", "a ute", "a website and social media accounts", "a customer database",
		"a walk-in fridge", "a Synesso coffee machine", "a Mazzer grinder", "commercial washers",
		"tyre changers", "a wheel aligner", "treadmills", "Technogym equipment", "reformer machines",
		"a Rational combi oven", "a Hobart dishwasher", "a Robot Coupe", "Square POS", "a Gelato machine",
	},
	"bizbuyer": {
		"an owner-operator", "a first-time business owner", "a husband-and-wife team", "an investor",
		"an experienced operator", "a family", "a chef", "a franchisee", "a tradesperson",
	},
	"trading": {
		"a loyal customer base", "a strong local following", "an excellent reputation", "five-star online reviews",
		"repeat clientele", "steady corporate clientele", "a growing catering side", "a thriving online store",
		"strong weekend trade", "lucrative school contracts", "a booming delivery trade",
	},
	"holiday": {
		"linen and towels supplied", "Wi-Fi and Netflix", "a fully equipped kitchen", "air conditioning",
		"a barbecue", "a washing machine", "beach towels", "a cot and high chair", "board games",
		"a Nespresso machine", "a smart TV", "bikes", "boogie boards", "a firepit", "a DVD library",
		"a welcome hamper", "fishing rods", "kayaks", "a hammock", "a pool table",
	},
	"renterm": {
		"12-month lease", "six-month lease", "long-term lease", "flexible lease", "12 or 24-month lease",
	},
	"applyvia": {"2Apply", "1Form", "Snug", "our website", "Ignite", "the realestate.com.au app", "Tenant Options"},
}
