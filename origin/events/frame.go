package events

import (
	"bytes"
	"strconv"
	"time"

	"github.com/listgate/listgate/pkg/internalapi"
)

// appendEvent appends an SSE event: id, event type and one data line per
// line of data, then the blank line that dispatches it.
func appendEvent(dst []byte, id int64, typ string, data []byte) []byte {
	dst = appendID(dst, id)
	if typ != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, typ...)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		dst = appendData(dst, data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	dst = appendData(dst, data)
	return append(dst, '\n')
}

func appendID(dst []byte, id int64) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, '\n')
}

func appendData(dst, line []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, line...)
	return append(dst, '\n')
}

// appendPosition appends an id with no data: a client takes it as its last
// event id, and nothing is dispatched.
func appendPosition(dst []byte, id int64) []byte {
	return append(appendID(dst, id), '\n')
}

// Reasons for a reset event.
const (
	resetExpired = "expired" // Last-Event-ID is older than the retained outbox
	resetUnknown = "unknown" // Last-Event-ID was never issued by this outbox
	resetLate    = "late"    // an event committed after the hub gave up waiting for it
)

// appendReset appends the reset event, positioned at id.
func appendReset(dst []byte, id int64, reason string) []byte {
	return appendEvent(dst, id, internalapi.EventReset, []byte(`{"reason":"`+reason+`"}`))
}

// appendRetry appends the reconnection-time field, in a block of its own.
func appendRetry(dst []byte, d time.Duration) []byte {
	dst = append(dst, "retry: "...)
	dst = strconv.AppendInt(dst, d.Milliseconds(), 10)
	return append(dst, "\n\n"...)
}

// heartbeat is the comment that keeps an idle stream alive.
var heartbeat = []byte(": heartbeat\n\n")
