package reaxml

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// mediaChild maps images, objects, media, externalLink and videoLink. It
// reports false for an element it does not handle.
func (m *mapper) mediaChild(n *node) bool {
	l := m.l
	switch n.name {
	case "images", "objects", "media":
		if l.Media == nil {
			l.Media = []Media{}
		}
		for _, k := range n.kids {
			kind, ok := mediaKind(n.name, k.name)
			if !ok {
				m.extra(k, n.name)
				continue
			}
			if md, ok := m.media(k, n.name+"/"+k.name, kind); ok {
				l.Media = append(l.Media, md)
			}
		}
	case "externalLink":
		appendText(&l.ExternalLinks, decodeLink(link(n)))
	case "videoLink":
		appendText(&l.VideoLinks, link(n))
	default:
		return false
	}
	return true
}

func mediaKind(parent, name string) (MediaKind, bool) {
	switch {
	case name == "img" && parent != "media":
		return MediaImage, true
	case name == "floorplan" && parent == "objects":
		return MediaFloorplan, true
	case name == "document" && parent == "objects":
		return MediaDocument, true
	case name == "attachment" && parent == "media":
		return MediaAttachment, true
	}
	return "", false
}

// media reads one slot. A slot with neither url nor file is a delete.
func (m *mapper) media(n *node, field string, kind MediaKind) (Media, bool) {
	md := Media{Kind: kind}
	md.Slot, _ = n.attr("id")
	if md.Slot == "" {
		m.bad(n, field+"@id", "", "slot id", nil)
		return md, false
	}
	md.URL, _ = n.attr("url")
	md.File, _ = n.attr("file")
	if md.URL == "" && md.File == "" {
		md.URL = n.ownText() // <img id="a">https://…</img>
	}
	md.Format, _ = n.attr("format")
	md.ContentType, _ = n.attr("contentType")
	md.Usage, _ = n.attr("usage")
	if s, ok := n.attr("modTime"); ok {
		md.ModTime, _ = m.date(n, field+"@modTime", s)
	}
	md.Delete = md.URL == "" && md.File == ""
	for _, k := range n.kids {
		m.extra(k, field)
	}
	return md, true
}

// link is the href attribute, or the text when there is none.
func link(n *node) string {
	if s, ok := n.attr("href"); ok {
		return s
	}
	return n.fullText()
}

// decodeLink undoes URL-encoding of a whole link
// ("http%3A%2F%2Fwww%2Eexample%2Ecom%2F"), leaving ordinary links alone.
func decodeLink(s string) string {
	if strings.Contains(s, "://") || !strings.Contains(strings.ToLower(s), "%3a") {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// agent reads one listingAgent. Agents with no name, e-mail, phone or link
// (<listingAgent id="2"><name/></listingAgent>) are dropped, but Agents
// becomes non-nil: the feed said who the agents are.
func (m *mapper) agent(n *node) {
	l := m.l
	if l.Agents == nil {
		l.Agents = []Agent{}
	}
	a := Agent{}
	a.ID, _ = n.attr("id")
	for _, k := range n.kids {
		switch strings.ToLower(k.name) {
		case "name":
			a.Name = k.fullText()
		case "email":
			a.Email = k.fullText()
		case "telephone", "phone":
			if num := k.fullText(); num != "" {
				t, _ := k.attr("type")
				a.Phones = append(a.Phones, Phone{Type: normPhoneType(t), Number: num})
			}
		case "twitterurl":
			a.TwitterURL = k.fullText()
		case "facebookurl":
			a.FacebookURL = k.fullText()
		case "linkedinurl":
			a.LinkedInURL = k.fullText()
		case "agentid":
			a.AgentID = k.fullText()
		case "photo", "agentphoto", "image", "img", "photourl":
			a.PhotoURL = photoURL(k)
		default:
			m.extra(k, "listingAgent")
		}
	}
	if a.Name == "" && a.Email == "" && len(a.Phones) == 0 && a.AgentID == "" &&
		a.TwitterURL == "" && a.FacebookURL == "" && a.LinkedInURL == "" && a.PhotoURL == "" {
		return
	}
	l.Agents = append(l.Agents, a)
}

func photoURL(n *node) string {
	for _, name := range []string{"url", "href", "file", "src"} {
		if s, ok := n.attrFold(name); ok && s != "" {
			return s
		}
	}
	if k := childNamed(n, "img"); k != nil {
		return photoURL(k)
	}
	return n.fullText()
}

// finishAgents sorts agents by their numeric id (agents without one keep
// feed order after those with one), drops repeats of an earlier agent and
// numbers the positions.
func (m *mapper) finishAgents() {
	l := m.l
	slices.SortStableFunc(l.Agents, func(a, b Agent) int { return agentOrder(a) - agentOrder(b) })
	seen := make(map[string]bool, len(l.Agents))
	out := l.Agents[:0]
	for _, a := range l.Agents {
		if k := agentKey(a); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	for i := range out {
		out[i].Position = i + 1
	}
	l.Agents = out
}

func agentOrder(a Agent) int {
	if n, err := strconv.Atoi(a.ID); err == nil && n >= 0 && n < 1<<20 {
		return n
	}
	return 1 << 20
}

// agentKey identifies an agent: by agentID, else by e-mail and name
// (without case), else by name and phones.
func agentKey(a Agent) string {
	switch {
	case a.AgentID != "":
		return "id\x00" + a.AgentID
	case a.Email != "":
		return "email\x00" + strings.ToLower(a.Email) + "\x00" + strings.ToLower(a.Name)
	}
	k := "name\x00" + a.Name
	for _, p := range a.Phones {
		k += "\x00" + string(p.Type) + "\x00" + p.Number
	}
	return k
}
