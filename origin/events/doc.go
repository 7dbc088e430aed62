// Package events streams the outbox (the events table, written by
// store.InsertEvent in the transaction of each change) to edges as
// Server-Sent Events on GET /internal/v1/events, and prunes it.
//
// # Wire format
//
// The stream is text/event-stream. It opens with a retry: hint, then:
//
//   - without Last-Event-ID: a position marker, "id: <head>" and a blank line
//     (it sets the client's last event id and dispatches nothing; the client
//     resyncs, because it has no continuity);
//   - with Last-Event-ID (the header, or ?last_event_id=): every event after
//     that id in id order, then live events. When that id is older than the
//     retained outbox (or was never issued), an "event: reset" comes first,
//     with id the current position and data {"reason":"expired"} (or
//     "unknown"): the client must purge what it cached, then live events
//     follow.
//
// Each event is
//
//	id: 42
//	event: key.revoked
//	data: {"key_hash":"…","key_id":"…","site_id":"…"}
//
// with the types of store.EventKeyRevoked and its siblings, and data the
// event's JSON object, which always carries site_id. Comment lines
// (": heartbeat") keep an idle stream alive every Config.Heartbeat.
//
// # Hub
//
// A Hub per origin process holds one dedicated connection that LISTENs on
// store.EventChannel. Each notification (and a periodic poll) makes it read
// the outbox after the last id it published, in id order, and fan the rows
// out to subscribers over bounded channels. A subscriber that falls
// Config.SubscriberBuffer events behind is cut (its stream ends; it resumes
// with Last-Event-ID) so it never stalls the others. When the connection
// drops the hub reconnects with backoff and catches up from its last id, so
// events written meanwhile, by this process or any other, are delivered.
//
// Ids come from a sequence, so a transaction can commit a lower id after
// another committed a higher one. The hub publishes strictly in id order and
// only ids that are final: at a gap it waits until every transaction that
// was running when the gap was seen has ended (the snapshot's xmin has
// passed that snapshot's xmax); what is still missing then never committed.
// Migration 0003 makes event-writing transactions take their transaction id
// before their event id, which that argument needs. Everything at or below
// the hub's position is therefore final, and a stream opens with a backlog
// read up to the position it subscribed at, then takes live events above
// it: no gap, no duplicate.
//
// An unrelated long transaction would hold such a wait (and a starting hub)
// indefinitely, so after Config.GapTimeout the hub gives up on the missing
// ids and watches them instead: should one commit after all, every stream
// gets "event: reset" (reason "late") rather than silently missing it.
package events
