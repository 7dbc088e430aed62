package e2e

import (
	"net/url"
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/model"
)

// featureCount is how many listings staff feature: one more than the
// Featured page's [listgate_featured count="4"] shows.
const featureCount = 5

// The dashboard user of the demo site that testFeatured creates; later
// steps sign in as it too.
const staffEmail, staffPassword = "staff@agency.example", "wp e2e staff password"

// testFeatured has staff feature listings in the Listgate dashboard (in a
// browser context of their own), then checks that the Featured page shows
// the API's first four featured listings, and a featured listing's page
// when its card is clicked.
func testFeatured(t *testing.T, e *env) {
	email, password := staffEmail, staffPassword
	e.lg.cliStdin(t, nil, password+"\n", "users", "create", "--email", email, "--password-stdin",
		"--site", e.lg.siteID, "--json")
	staff := e.admin.Incognito()
	staff.Do(chromedp.Navigate(e.lg.edgeURL+"/dashboard/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SetValue(chromedp.CSS(`#email`), email),
		chromedp.SetValue(chromedp.CSS(`#password`), password))
	clickToLoad(staff, `#sign-in`)
	open(staff, e.lg.edgeURL+"/dashboard/sites/"+e.lg.siteID+"/listings", `#listings`)
	// Current listings: the featured API (like the plugin's Featured page)
	// serves those only, and the newest listings of a feed may be sold or
	// withdrawn.
	for i := 0; i < featureCount; i++ {
		clickToLoad(staff, `#listings tr[data-status=current] form:has(input[name=featured][value=true]) button`)
	}

	// The edges learn of the change from the origin's event stream.
	var want model.Collection[model.Listing]
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := e.lg.get(t, "/listings/featured", url.Values{"per_page": {"4"}})
		want = model.Collection[model.Listing]{}
		if resp.StatusCode != 200 || json.Unmarshal(body, &want) != nil {
			t.Fatalf("featured: %d %.300s", resp.StatusCode, body)
		}
		if want.Meta.Total == featureCount {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API has %d featured listings 10 s after staff featured %d", want.Meta.Total, featureCount)
		}
		time.Sleep(100 * time.Millisecond)
	}

	b := e.visitor
	open(b, e.wp.featuredURL, `.listgate-grid article.listgate-card`)
	checkNoFailure(t, b)
	if got := cardRefs(cards(b)); !slices.Equal(got, refsOf(want)) || len(got) != 4 {
		t.Fatalf("featured cards %q, want the API's first four featured %q", got, refsOf(want))
	}
	// The page has no [listgate_listings]: the featured shortcode itself
	// shows the listing a card links to.
	ref := refsOf(want)[0]
	clickToLoad(b, chromedp.CSS(`.listgate-featured article.listgate-card[data-listing-ref="`+ref+`"] a.listgate-card-link`))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-listing[data-listing-ref="` + ref + `"]`)))
	checkNoFailure(t, b)
}
