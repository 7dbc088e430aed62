-- The event stream (origin/events): what GET /internal/v1/events needs
-- beyond the outbox table of 0001.

-- How far the outbox has been pruned: every event with an id at or below
-- pruned_through may be gone. A client resuming from an older id has missed
-- events and is told to reset. One row.
-- (Not a tenant table: it has no site and no primary key; the unique index
-- on a constant keeps it to one row.)
CREATE TABLE event_stream_state (
    pruned_through bigint NOT NULL DEFAULT 0 CHECK (pruned_through >= 0)
);
CREATE UNIQUE INDEX event_stream_state_one_row ON event_stream_state ((true));
INSERT INTO event_stream_state DEFAULT VALUES;

-- An event-writing transaction takes its transaction id before the event
-- takes its id from the sequence (a BEFORE STATEMENT trigger runs before the
-- rows, and with them the identity default, are computed). The stream relies
-- on it: a transaction holding a lower, still invisible event id is then
-- always in the snapshot's in-progress list, so the stream can tell a gap
-- that may still fill from one that never will (see origin/events).
CREATE FUNCTION events_take_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_current_xact_id();
    RETURN NULL;
END
$$;
CREATE TRIGGER events_take_xid BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_take_xid();
