package reaxml

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// fastCases are feeds at the edges of the fast path's subset: each must
// decode exactly as encoding/xml alone decodes it, whether the fast path
// reads it or gives up on it.
var fastCases = []string{
	feed(stub("<description>line one\r\nline two\rthree\n</description>")),
	feed(stub(`<description>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233; &#x2019; &nbsp;&rsquo;</description>`)),
	feed(stub(`<description>&#X41; &#; &bogus; &amp x; &am</description>`)),
	feed(stub(`<description>a ]]> b</description>`)),
	feed(stub(`<description>a ]] > b &gt;</description>`)),
	feed(stub("<description><![CDATA[ <b>x</b> & \r\n ]]]></description>")),
	feed(stub(`<description>one<br>two</description>`)),
	feed(stub(`<description>one<br/>two<br />three</description>`)),
	feed(stub(`<description>a<!-- note -->b<!---->c</description>`)),
	feed(stub(`<description>a<!-- bad -- comment -->b</description>`)),
	feed(stub(`<description>a<?pi x?>b</description>`)),
	feed(stub(`<description>a<!DOCTYPE x>b</description>`)),
	feed(stub(`<address display="no" ><street  x = 'a&amp;b' y="c` + "\r\n" + `d">1 Main</street></address>`)),
	feed(stub(`<price display=yes>100</price>`)),
	feed(stub(`<underOffer value="yes" checked>x</underOffer>`)),
	feed(stub(`<a:headline xmlns:a="urn:x">Prefixed</a:headline>`)),
	feed(stub(`<headline xmlns="urn:x">Default namespace</headline>`)),
	feed(stub(`<héadline>Non-ASCII name</héadline>`)),
	feed(stub(`<1headline>digit</1headline>`)),
	feed(stub(`<headline>Mismatched</headlin>`)),
	feed(stub(`<headline>Unclosed`)),
	feed(stub(`<headline attr="<">lt in attr</headline>`)),
	feed(stub(`<headline>x</headline >`)),
	feed(stub(`<headline>x</headline junk>`)),
	"<propertyList>\n<!-- top comment -->\n" + stub("") + "\n<?pi?>\n" + stub("") + "</propertyList>",
	"<propertyList>\n" + stub("") + "\n&amp; top text\n" + stub("") + "</propertyList>",
	"<propertyList>\n" + stub("") + "\n]]>\n" + stub("") + "</propertyList>",
	"<propertyList>\n" + stub("") + "\n" + stub("") + "</propertyList >trailing <junk",
	"<propertyList>\n" + stub("") + "\n" + stub("") + "</other>",
	"<propertyList>\n" + stub("") + "\n" + stub(""),
	"<propertyList>\n" + stub("") + "\n<residential/>\n<residential></residential>\n" + stub("") + "</propertyList>",
	"<propertyList>\n" + stub("") + "\n<unknownThing><a>b</a></unknownThing>\n" + stub("") + "</propertyList>",
	"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<propertyList>" + stub("<headline>caf\xe9</headline>") + "</propertyList>",
	"<?xml version=\"1.0\" encoding=\"utf8\"?>\n<propertyList>" + stub("<headline>café</headline>") + "</propertyList>",
	"<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n<propertyList>" + stub("<headline>caf\xe9</headline>") + "</propertyList>",
	"<propertyList>" + stub("<headline>"+strings.Repeat("<b>", 70)+"deep"+strings.Repeat("</b>", 70)+"</headline>") + "</propertyList>",
}

// decodeBoth decodes a feed with the fast path and with encoding/xml
// alone, and fails the test when the two differ in anything: listings,
// listing errors, the fatal error and every line number.
func decodeBoth(t *testing.T, data []byte, limit int) (fast result) {
	t.Helper()
	opts := Options{Location: time.UTC}
	fast = decodeAll(t, bytes.NewReader(data), opts, limit)
	d := NewDecoder(bytes.NewReader(data), opts)
	d.noFast = true
	slow := decodeWith(t, d, limit)
	if f, s := mustJSON(t, fast), mustJSON(t, slow); !bytes.Equal(f, s) {
		t.Errorf("the fast path decodes %q differently\nfast:     %s\nxml only: %s", cut(string(data)), f, s)
	}
	return fast
}

func TestFastPathMatchesXML(t *testing.T) {
	for _, c := range fastCases {
		decodeBoth(t, []byte(c), 1000)
	}
	for _, path := range mustSamples(t) {
		decodeBoth(t, mustReadFile(t, path), 1000)
	}
	// A listing cut by the source's refills at every offset of its first
	// chunk: the fast path must read on across them.
	var gen bytes.Buffer
	if err := reaxmlgen.Generate(&gen, reaxmlgen.Options{Seed: 9, Listings: 400}); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 7, 1000, 4096} {
		data := gen.Bytes()
		fast := decodeAll(t, &chunkReader{data: data, n: chunk}, Options{Location: time.UTC}, 1000)
		d := NewDecoder(bytes.NewReader(data), Options{Location: time.UTC})
		d.noFast = true
		if f, s := mustJSON(t, fast), mustJSON(t, decodeWith(t, d, 1000)); !bytes.Equal(f, s) {
			t.Fatalf("read %d bytes at a time, the fast path decodes the generated feed differently", chunk)
		}
	}
}

// chunkReader hands out at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

// TestFastPathReadsGeneratedFeeds: the feeds the generator writes (and the
// plain sample feeds) are read by the fast path to the end, not handed to
// encoding/xml — otherwise the speed it exists for is silently lost.
func TestFastPathReadsGeneratedFeeds(t *testing.T) {
	var gen bytes.Buffer
	if err := reaxmlgen.Generate(&gen, reaxmlgen.Options{Seed: 3, Listings: 2000}); err != nil {
		t.Fatal(err)
	}
	feeds := map[string][]byte{"generated": gen.Bytes()}
	for _, name := range []string{"reasample_residential.xml", "openrealestate_residential_current_cdata.xml", "i4ucode_AABBCC_2015-02-15_11-03-51.xml"} {
		feeds[name] = mustReadFile(t, sampleDir+"/"+name)
	}
	for name, data := range feeds {
		d := NewDecoder(bytes.NewReader(data), Options{})
		decodeWith(t, d, 10000)
		if d.fs == nil {
			t.Errorf("%s: the fast path gave up before the end of the feed", name)
		}
	}
}

// FuzzFastMatchesXML: on any input the fast path and encoding/xml alone
// give the same listings, errors and line numbers.
func FuzzFastMatchesXML(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	for _, path := range mustSamples(f) {
		f.Add(mustReadFile(f, path))
	}
	var gen bytes.Buffer
	if err := reaxmlgen.Generate(&gen, reaxmlgen.Options{Seed: 5, Listings: 3}); err != nil {
		f.Fatal(err)
	}
	f.Add(gen.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeBoth(t, data, len(data)/3+2)
	})
}

// A large listing is scanned again after each refill of the buffer; the
// refills double what is kept, so a 6 MiB listing read 32 KB at a time
// takes a handful of them, not one per read (which made a hostile feed of
// large listings cost time quadratic in their size).
func TestFastPathRefillsGeometrically(t *testing.T) {
	big := feed(stub("<description>" + strings.Repeat("Sunny rooms and a long garden. ", 200_000) + "</description>"))
	d := NewDecoder(&chunkReader{data: []byte(big), n: 32 << 10}, Options{})
	res := decodeWith(t, d, 10)
	if len(res.Entries) != 1 || res.Entries[0].Listing == nil || d.fs == nil {
		t.Fatalf("the listing was not read by the fast path: %s", cut(string(mustJSON(t, res))))
	}
	if d.src.refills > 12 {
		t.Errorf("%d refills for a %d MiB listing", d.src.refills, len(big)>>20)
	}
}

// Text between listings that a refill of the buffer cuts is read on as
// encoding/xml alone reads it: a "]]>" cut after "]]" is still an error,
// and a character cut in two is not handed to encoding/xml half read.
func TestFastPathReadsTextCutByARefill(t *testing.T) {
	pre := "<propertyList>\n" + stub("") + "\n"
	for _, c := range []struct{ cut, rest string }{
		{"]]", ">\n"},
		{"\xc3", "\xa9 &amp;\n"}, // é
	} {
		pad := strings.Repeat(" ", sourceChunk-len(pre)-len(c.cut))
		data := []byte(pre + pad + c.cut + c.rest + stub("") + "</propertyList>")
		fast := decodeAll(t, bytes.NewReader(data), Options{Location: time.UTC}, 100)
		d := NewDecoder(bytes.NewReader(data), Options{Location: time.UTC})
		d.noFast = true
		if f, s := mustJSON(t, fast), mustJSON(t, decodeWith(t, d, 100)); !bytes.Equal(f, s) {
			t.Errorf("the fast path decodes %q cut after %q differently\nfast:     %s\nxml only: %s", c.cut+c.rest, c.cut, f, s)
		}
	}
}
