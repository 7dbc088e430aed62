package reaxmlgen

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
