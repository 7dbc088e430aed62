package ingest

import "github.com/listgate/listgate/pkg/reaxml"

// mediaKind maps a feed's media element to the API's media kind; the slot
// keeps attachments apart from objects/document slots.
func mediaKind(m reaxml.Media) (kind, slot string) {
	switch m.Kind {
	case reaxml.MediaFloorplan:
		return "floorplan", m.Slot
	case reaxml.MediaDocument:
		return "document", m.Slot
	case reaxml.MediaAttachment:
		return "document", "attachment-" + m.Slot
	default:
		return "image", m.Slot
	}
}
