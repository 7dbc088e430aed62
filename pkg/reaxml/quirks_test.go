package reaxml

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTextQuirks covers the byte-level tolerance: BOM, missing declaration,
// forbidden characters, encodings, CDATA, entities.
func TestTextQuirks(t *testing.T) {
	body := func(desc string) string {
		return `<propertyList>` + stub(`<description>`+desc+`</description>`) + `</propertyList>`
	}
	tests := []struct {
		name string
		feed string
		want string
	}{
		{"BOM before declaration", "\xef\xbb\xbf<?xml version=\"1.0\"?>\r\n" + body("ok"), "ok"},
		{"no declaration", body("ok"), "ok"},
		{"U+0016 dropped", body("Don\x16t stop"), "Dont stop"},
		{"other C0 controls dropped", body("a\x00b\x01c\x1fd\te"), "abcd\te"},
		{"forbidden character reference dropped", body("a&#22;b&#x0;c&#x1F;d"), "abcd"},
		{"allowed character reference kept", body("caf&#233; &#x2019;"), "café ’"},
		{"latin-1 declared", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + body("Caf\xe9 \x93quoted\x94 \xbd"), "Café “quoted” ½"},
		{"windows-1252 declared", "<?xml version='1.0' encoding='windows-1252'?>" + body("\x80 5"), "€ 5"},
		{"stray latin-1 byte in UTF-8 feed", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + body("caf\xe9 it\x92s"), "café it’s"},
		{"noncharacter U+FFFF dropped", body("a\uffffb"), "ab"},
		{"CDATA with padding", body("<![CDATA[  Big \n ]]>"), "Big"},
		{"CDATA keeps markup", body("<![CDATA[ <b>bold</b> & more ]]>"), "<b>bold</b> & more"},
		{"padded text", body("\n\t\t  Padded  \n\t"), "Padded"},
		{"HTML entities", body("a&nbsp;b &rsquo;c&rsquo; &amp; &lt;"), "a\u00a0b ’c’ & <"},
		{"bare ampersand", body("Fish & Chips"), "Fish & Chips"},
		{"html line break", body("one<br>two"), "one\ntwo"},
		{"inline markup keeps order", body("a <b>bold</b> move"), "a bold move"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustDecodeOne(t, tt.feed)
			if l.Description == nil || *l.Description != tt.want {
				t.Errorf("description = %q, want %q", deref(l.Description), tt.want)
			}
		})
	}
}

// TestLineNumbersSurviveSanitizing checks that dropped characters and a BOM
// do not shift the reported line numbers.
func TestLineNumbersSurviveSanitizing(t *testing.T) {
	f := "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<propertyList>\n\x16\x16\n" + stub("") + "\n" + stub("") + "\n</propertyList>"
	ls := decodeAll(t, strings.NewReader(f), Options{}, 10).listings(t)
	if len(ls) != 2 || ls[0].Line != 4 || ls[1].Line != 5 {
		t.Fatalf("lines = %v, want 4 and 5", []int{ls[0].Line, ls[1].Line})
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func TestStudio(t *testing.T) {
	for _, in := range []string{"Studio", "studio", " STUDIO "} {
		t.Run(in, func(t *testing.T) {
			l := mustDecodeOne(t, feed(stub(`<features><bedrooms>`+in+`</bedrooms></features>`)))
			f := l.Features
			if f == nil || f.Bedrooms == nil || *f.Bedrooms != 0 || !f.Studio {
				t.Fatalf("features = %+v, want 0 bedrooms and Studio", f)
			}
		})
	}
	l := mustDecodeOne(t, feed(stub(`<features><bedrooms>3</bedrooms></features>`)))
	if l.Features.Studio || *l.Features.Bedrooms != 3 {
		t.Errorf("3 bedrooms read as %+v", l.Features)
	}
}

func TestBooleans(t *testing.T) {
	tests := []struct {
		in   string
		want *bool
	}{
		{"yes", ptr(true)}, {"YES", ptr(true)}, {"Yes", ptr(true)}, {"true", ptr(true)}, {"TRUE", ptr(true)},
		{"1", ptr(true)}, {"2", ptr(true)}, {"no", ptr(false)}, {"No", ptr(false)}, {"FALSE", ptr(false)},
		{"0", ptr(false)}, {"", nil}, {" yes ", ptr(true)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l := mustDecodeOne(t, feed(stub(`<underOffer value="`+tt.in+`"/><features><airConditioning>`+tt.in+`</airConditioning></features>`)))
			if !equalPtr(l.UnderOffer, tt.want) {
				t.Errorf("underOffer = %v, want %v", deref(l.UnderOffer), deref(tt.want))
			}
			got, ok := l.Features.Flags["airConditioning"]
			if ok != (tt.want != nil) || (ok && got != *tt.want) {
				t.Errorf("airConditioning = %v (%v), want %v", got, ok, deref(tt.want))
			}
		})
	}
	e := mustListingError(t, feed(stub(`<underOffer value="maybe"/>`)))
	if !strings.Contains(e.Message, `underOffer: cannot read "maybe" as yes/no`) {
		t.Errorf("message %q", e.Message)
	}
}

func ptr[T any](v T) *T { return &v }

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func TestEmptyImageSlotIsDelete(t *testing.T) {
	l := mustDecodeOne(t, feed(stub(`<images>
		<img id="m" modTime="2024-03-01-09:00:00" url="https://x.example/m.jpg" format="jpg"/>
		<img id="b"/>
		<img id="a" file="a.jpg"/>
		<img id="c" url="" />
	</images><media><attachment id="soi" usage="statementOfInformation" url=""/></media>`)))
	var got []string
	for _, m := range l.Media {
		s := string(m.Kind) + ":" + m.Slot
		if m.Delete {
			s += ":delete"
			if m.URL != "" || m.File != "" {
				t.Errorf("delete slot %s has url %q file %q", m.Slot, m.URL, m.File)
			}
		}
		got = append(got, s)
	}
	want := []string{"image:m", "image:b:delete", "image:a", "image:c:delete", "attachment:soi:delete"}
	if !slices.Equal(got, want) {
		t.Errorf("slots = %v, want %v", got, want)
	}
	if l.Media[0].ModTime.IsZero() || l.Media[2].File != "a.jpg" {
		t.Errorf("slots lost data: %+v", l.Media)
	}
}

func TestStatusStubs(t *testing.T) {
	tests := []struct {
		attr string
		want Status
	}{
		{`status="deleted"`, StatusDeleted},
		{`status="offmarket"`, StatusOffmarket},
		{`status="offMarket"`, StatusOffmarket},
		{`status="withdrawn"`, StatusWithdrawn},
		{`status="sold"`, StatusSold},
		{`status="leased"`, StatusLeased},
		{`status="Current"`, StatusCurrent},
		{``, StatusCurrent},
	}
	for _, tt := range tests {
		t.Run(string(tt.want)+" "+tt.attr, func(t *testing.T) {
			l := mustDecodeOne(t, feed(`<rental `+tt.attr+` modTime="2024-03-01-09:00:00"><agentID>A</agentID><uniqueID>U</uniqueID></rental>`))
			if l.Status != tt.want {
				t.Errorf("status = %q, want %q", l.Status, tt.want)
			}
			stub := Listing{Kind: KindRental, AgentID: "A", UniqueID: "U", Status: tt.want, ModTime: l.ModTime, Line: l.Line}
			if !equalJSON(t, l, &stub) {
				t.Errorf("stub carries more than ids: %s", mustJSON(t, l))
			}
		})
	}
	e := mustListingError(t, feed(`<rental status="archived"><agentID>A</agentID><uniqueID>U</uniqueID></rental>`))
	if !strings.Contains(e.Message, "status") || e.UniqueID != "U" {
		t.Errorf("unknown status: %+v", e)
	}
}

func TestRepeatedRent(t *testing.T) {
	l := mustDecodeOne(t, feed(`<rental><agentID>A</agentID><uniqueID>U</uniqueID>
		<rent period="weekly" display="yes">450</rent>
		<rent period="monthly">1,955.50</rent>
		<rent period="week"><range><min>400</min><max>500</max></range></rent>
		<bond>$1,800</bond></rental>`))
	want := []Rent{
		{Amount: Amount{Value: ptr(450.0)}, Period: PeriodWeek, Display: ptr(true)},
		{Amount: Amount{Value: ptr(1955.5)}, Period: PeriodMonth},
		{Amount: Amount{Min: ptr(400.0), Max: ptr(500.0)}, Period: PeriodWeek},
	}
	if !equalJSON(t, l.Rents, want) {
		t.Errorf("rents = %s", mustJSON(t, l.Rents))
	}
	if l.Bond == nil || *l.Bond.Value != 1800 {
		t.Errorf("bond = %s", mustJSON(t, l.Bond))
	}
}

// TestBadListingMidFeed checks that a bad listing is reported with its line
// and ids while the listings after it still parse.
func TestBadListingMidFeed(t *testing.T) {
	f := feed(
		stub(``),
		`<rental modTime="2024-03-01-09:00:00">
  <agentID>AG1</agentID>
  <uniqueID>BAD1</uniqueID>
  <dateAvailable>next Tuesday</dateAvailable>
  <inspectionTimes><inspection>By appointment</inspection></inspectionTimes>
</rental>`,
		`<land><uniqueID>NOAGENT</uniqueID></land>`,
		`<garage><agentID>AG1</agentID><uniqueID>G1</uniqueID></garage>`,
		`<residential modTime="soon"><agentID>AG1</agentID><uniqueID>BAD2</uniqueID><features><bedrooms>three</bedrooms></features></residential>`,
		`<rental><agentID>AG1</agentID><uniqueID>GOOD2</uniqueID></rental>`,
	)
	res := decodeAll(t, strings.NewReader(f), Options{}, 100)
	if res.Fatal != "" || len(res.Entries) != 6 {
		t.Fatalf("result: %s", mustJSON(t, res))
	}
	wantErrs := []struct {
		i                 int
		line              int
		kind              Kind
		uniqueID, agentID string
		contains          []string
		is                error
	}{
		{1, 4, KindRental, "BAD1", "AG1", []string{"line 7: dateAvailable", `"next Tuesday" as date`, "line 8: inspectionTimes/inspection"}, nil},
		{2, 10, KindLand, "NOAGENT", "", []string{"required"}, nil},
		{3, 11, "", "G1", "AG1", []string{"not a REAXML listing element"}, nil},
		{4, 12, KindResidential, "BAD2", "AG1", []string{"@modTime", "features/bedrooms"}, nil},
	}
	for _, w := range wantErrs {
		e := res.Entries[w.i].Error
		if e == nil {
			t.Errorf("entry %d: no error", w.i)
			continue
		}
		if e.Line != w.line || e.Kind != w.kind || e.UniqueID != w.uniqueID || e.AgentID != w.agentID {
			t.Errorf("entry %d: got %+v", w.i, e)
		}
		for _, c := range w.contains {
			if !strings.Contains(e.Message, c) {
				t.Errorf("entry %d: message %q lacks %q", w.i, e.Message, c)
			}
		}
	}
	if l := res.Entries[5].Listing; l == nil || l.UniqueID != "GOOD2" {
		t.Errorf("listing after the bad ones: %+v", res.Entries[5])
	}
}

func TestListingErrorIs(t *testing.T) {
	d := NewDecoder(strings.NewReader(feed(`<land><uniqueID>X</uniqueID></land>`, `<hotel/>`, stub(`<auction date="2009-02-30"/>`))), Options{})
	_, err := d.Next()
	if !errors.Is(err, ErrMissingID) {
		t.Errorf("missing agentID: %v", err)
	}
	_, err = d.Next()
	if !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown element: %v", err)
	}
	_, err = d.Next()
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Field != "auction@date" || ve.Want != "date" || ve.Value != "2009-02-30" {
		t.Errorf("bad auction date: %#v", err)
	}
	if _, err = d.Next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}

func TestUnknownElementsKept(t *testing.T) {
	l := mustDecodeOne(t, feed(stub(`
		<streetDirectory type="melways"><page>44</page><reference>G7</reference></streetDirectory>
		<address><suburb>Kew</suburb><region>Eastern</region></address>
		<features><bedrooms>2</bedrooms><views>Ocean</views></features>
		<listingAgent><name>A</name><licence>123</licence></listingAgent>
		<solarRating stars="5"/>`)))
	var names []string
	for _, e := range l.Extra {
		names = append(names, e.Name)
	}
	want := []string{"streetDirectory", "address/region", "features/views", "listingAgent/licence", "solarRating"}
	if !slices.Equal(names, want) {
		t.Fatalf("extra = %v, want %v", names, want)
	}
	sd := l.Extra[0]
	if sd.Attrs["type"] != "melways" || len(sd.Children) != 2 || sd.Children[1].Text != "G7" {
		t.Errorf("streetDirectory = %+v", sd)
	}
	if l.Extra[4].Attrs["stars"] != "5" || l.Extra[2].Text != "Ocean" {
		t.Errorf("extra = %+v", l.Extra)
	}
}

func TestAbsentVersusEmpty(t *testing.T) {
	l := mustDecodeOne(t, feed(stub(`<headline/><inspectionTimes/><address><subNumber></subNumber><suburb>Kew</suburb></address>
		<images/><externalLink href=""/><listingAgent id="1"><name/></listingAgent><price display="no"/><dateAvailable/>`)))
	switch {
	case l.Headline == nil || *l.Headline != "":
		t.Error("empty headline must be present and empty")
	case l.Description != nil:
		t.Error("absent description must be nil")
	case l.Inspections == nil || len(l.Inspections) != 0:
		t.Error("empty inspectionTimes must be a non-nil empty slice")
	case l.Address.SubNumber == nil || *l.Address.SubNumber != "" || l.Address.Street != nil:
		t.Error("address parts: empty present, missing nil")
	case l.Media == nil || len(l.Media) != 0:
		t.Error("empty images must be a non-nil empty slice")
	case l.ExternalLinks == nil || len(l.ExternalLinks) != 0:
		t.Error("empty externalLink must give a non-nil empty slice")
	case l.Agents == nil || len(l.Agents) != 0:
		t.Error("only empty agents must give a non-nil empty slice")
	case l.Price == nil || l.Price.Value != nil || l.Price.Display == nil || *l.Price.Display:
		t.Error("empty price must be present with no value")
	case l.DateAvailable == nil || !l.DateAvailable.IsZero():
		t.Error("empty dateAvailable must point at the zero time")
	case l.Features != nil || l.Sold != nil || l.Rents != nil || l.Extra != nil:
		t.Error("absent groups must be nil")
	}
}

func TestAgents(t *testing.T) {
	l := mustDecodeOne(t, feed(stub(`
		<listingAgent id="3"><name>Cara</name><telephone type="mobile">0400 000 003</telephone></listingAgent>
		<listingAgent id="1"><name>Ann</name><email>ann@agency.example</email>
			<telephone type="BH">02 9000 0001</telephone><telephone type="AH">02 9000 0002</telephone>
			<telephone type="mobile">0400 000 001</telephone><twitterURL>https://x.example/ann</twitterURL>
			<facebookURL>https://fb.example/ann</facebookURL><linkedInURL> https://li.example/ann </linkedInURL>
			<photo url="https://media.example/ann.jpg"/></listingAgent>
		<listingAgent id="2"><name/></listingAgent>
		<listingAgent id="4"><name>Ann</name><email>ANN@agency.example</email></listingAgent>`)))
	if len(l.Agents) != 2 {
		t.Fatalf("agents = %s", mustJSON(t, l.Agents))
	}
	ann, cara := l.Agents[0], l.Agents[1]
	if ann.Name != "Ann" || ann.Position != 1 || cara.Name != "Cara" || cara.Position != 2 || cara.ID != "3" {
		t.Errorf("order: %s", mustJSON(t, l.Agents))
	}
	wantPhones := []Phone{{PhoneBusinessHours, "02 9000 0001"}, {PhoneAfterHours, "02 9000 0002"}, {PhoneMobile, "0400 000 001"}}
	if !slices.Equal(ann.Phones, wantPhones) || ann.LinkedInURL != "https://li.example/ann" ||
		ann.TwitterURL == "" || ann.FacebookURL == "" || ann.PhotoURL != "https://media.example/ann.jpg" {
		t.Errorf("ann = %s", mustJSON(t, ann))
	}
}

func TestExternalLinkDecoded(t *testing.T) {
	l := mustDecodeOne(t, feed(stub(`<externalLink href="http%3A%2F%2Fwww%2Eexample%2Ecom%2Ftour%23plan"/>
		<externalLink href="https://example.com/a%20b?x=1"/><videoLink href="https://video.example/v"/>`)))
	want := []string{"http://www.example.com/tour#plan", "https://example.com/a%20b?x=1"}
	if !slices.Equal(l.ExternalLinks, want) || !slices.Equal(l.VideoLinks, []string{"https://video.example/v"}) {
		t.Errorf("links = %v %v", l.ExternalLinks, l.VideoLinks)
	}
}

func TestCredentialsNeverInListing(t *testing.T) {
	f := `<propertyList date="2024-01-01" username="secret-user-x1" password="secret-pass-y2">` +
		stub(`<description>fine</description>`) + `<land><uniqueID>U</uniqueID></land></propertyList>`
	res := decodeAll(t, strings.NewReader(f), Options{}, 10)
	out := string(mustJSON(t, res))
	if strings.Contains(out, "secret-") {
		t.Fatalf("credentials leaked into the result: %s", out)
	}
	if len(res.Entries) != 2 {
		t.Fatalf("entries: %s", out)
	}
}

func TestFatalErrors(t *testing.T) {
	tests := []struct {
		name, feed string
		is         error
	}{
		{"truncated", feed(stub(""))[:120], io.ErrUnexpectedEOF},
		{"wrong root", `<listings><residential/></listings>`, ErrNotREAXML},
		{"empty input", ``, ErrNotREAXML},
		{"unsupported encoding", `<?xml version="1.0" encoding="UTF-16"?><propertyList/>`, nil},
		{"stray end tag", `<propertyList></propertyList></extra>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.feed), Options{})
			var err error
			for range 10 {
				if _, err = d.Next(); err != nil {
					var le *ListingError
					if !errors.As(err, &le) {
						break
					}
				}
			}
			if tt.name == "stray end tag" {
				if err != io.EOF {
					t.Fatalf("content after the root: got %v, want io.EOF", err)
				}
				return
			}
			var le *ListingError
			if err == nil || err == io.EOF || errors.As(err, &le) {
				t.Fatalf("got %v, want a feed error", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("got %v, want %v", err, tt.is)
			}
			if _, again := d.Next(); again == nil || again.Error() != err.Error() {
				t.Errorf("not sticky: %v then %v", err, again)
			}
		})
	}
}

func TestTooLargeListing(t *testing.T) {
	deep := strings.Repeat("<x>", 100) + strings.Repeat("</x>", 100)
	res := decodeAll(t, strings.NewReader(feed(stub(deep), stub(""))), Options{}, 10)
	if len(res.Entries) != 2 || res.Entries[0].Error == nil || res.Entries[1].Listing == nil {
		t.Fatalf("result: %s", mustJSON(t, res))
	}
	if e := res.Entries[0].Error; e.UniqueID != "U1" || !strings.Contains(e.Message, "too large") {
		t.Errorf("error: %+v", e)
	}
}

func TestLocationOption(t *testing.T) {
	f := feed(stub(`<inspectionTimes><inspection>21-Jan-2009 11:00am to 1:00pm</inspection></inspectionTimes>`))
	syd := decodeAll(t, strings.NewReader(f), Options{}, 10).listings(t)[0]
	utc := decodeAll(t, strings.NewReader(f), Options{Location: time.UTC}, 10).listings(t)[0]
	if syd.ModTime.Location().String() != "Australia/Sydney" || utc.ModTime.Location() != time.UTC {
		t.Errorf("locations: %v, %v", syd.ModTime.Location(), utc.ModTime.Location())
	}
	if got := utc.Inspections[0].StartsAt.Sub(syd.Inspections[0].StartsAt); got != 11*time.Hour {
		t.Errorf("UTC minus Sydney (summer) = %v, want 11h", got)
	}
}

func TestFeedDate(t *testing.T) {
	tests := []struct {
		name, root string
		want       time.Time
		wantErr    bool
	}{
		{"present", `<propertyList date="2009-01-01-12:30:00">`, time.Date(2009, 1, 1, 12, 30, 0, 0, DefaultLocation), false},
		{"absent", `<propertyList>`, time.Time{}, false},
		{"unreadable", `<propertyList date="yesterday">`, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.root+stub("")+`</propertyList>`), Options{})
			got, err := d.FeedDate()
			if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
				t.Errorf("FeedDate() = %v, %v", got, err)
			}
			if l, err := d.Next(); err != nil || l.UniqueID != "U1" {
				t.Errorf("Next after FeedDate: %v, %v", l, err)
			}
		})
	}
}
