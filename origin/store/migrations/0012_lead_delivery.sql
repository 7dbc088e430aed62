-- Lead delivery (origin/delivery): signed webhooks to the endpoints a site
-- registers, and an e-mail to the agent a new lead is assigned to.
--
-- A lead's event is written to the outbox (events) in the lead's own
-- transaction; a trigger fans it out, in that same transaction, into one
-- delivery per endpoint that subscribes to it (and, for lead.created, one
-- e-mail). Workers on every origin claim due deliveries with FOR UPDATE SKIP
-- LOCKED and a lease, so nothing is lost when an origin dies and no delivery
-- is sent by two origins at once.

ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('key.revoked', 'key.changed',
    'site.plan_changed', 'site.content_changed', 'site.cors_changed',
    'lead.created', 'lead.duplicate', 'lead.updated'));

-- An endpoint's signing secret is not stored: it is derived from the
-- operator's key (LISTGATE_SECRET_KEY), the endpoint's id and secret_gen
-- (pkg/webhook.DeriveSecret). Rotation raises secret_gen; until
-- prev_secret_until the previous generation signs as well.
CREATE TABLE webhook_endpoints (
    site_id           uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id                uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    url               text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    events            text[] NOT NULL CHECK (cardinality(events) > 0
                          AND events <@ ARRAY['lead.created', 'lead.duplicate', 'lead.updated']),
    secret_gen        integer NOT NULL DEFAULT 1 CHECK (secret_gen > 0),
    prev_secret_until timestamptz,
    enabled           boolean NOT NULL DEFAULT true,
    -- Why it is disabled: 'operator' or 'failing' (see store.DisableAfter).
    disabled_reason   text CHECK (disabled_reason IN ('operator', 'failing')),
    disabled_at       timestamptz,
    -- Consecutive failed attempts, and the first of them.
    failures          integer NOT NULL DEFAULT 0,
    failing_since     timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, id)
);

-- One message to one endpoint (endpoint_id set) or the e-mail of a new lead
-- (endpoint_id NULL). The event's id names the message (webhook-id
-- "msg_<event_id>") across retries and replays. body is fixed at the first
-- attempt, so every retry sends the same bytes. 'held': the endpoint was
-- disabled; a replay sends it.
CREATE TABLE deliveries (
    site_id       uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    endpoint_id   uuid,
    event_id      bigint NOT NULL,
    event_type    text NOT NULL,
    lead_id       bigint NOT NULL,
    payload       jsonb NOT NULL DEFAULT '{}',
    body          bytea,
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'held', 'skipped')),
    attempts      integer NOT NULL DEFAULT 0,
    next_at       timestamptz NOT NULL DEFAULT now(),
    created_at    timestamptz NOT NULL DEFAULT now(),
    done_at       timestamptz,
    last_error    text,
    PRIMARY KEY (site_id, id),
    UNIQUE (id),
    FOREIGN KEY (site_id, lead_id) REFERENCES leads (site_id, id) ON DELETE CASCADE,
    -- The endpoint is the delivery's site's (an e-mail has none): no query
    -- can send one site's lead to another's endpoint.
    FOREIGN KEY (site_id, endpoint_id) REFERENCES webhook_endpoints (site_id, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_due_webhooks ON deliveries (next_at) WHERE state = 'pending' AND endpoint_id IS NOT NULL;
CREATE INDEX deliveries_due_email ON deliveries (next_at) WHERE state = 'pending' AND endpoint_id IS NULL;
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created_at DESC);
CREATE INDEX deliveries_lead ON deliveries (site_id, lead_id);
CREATE INDEX deliveries_done ON deliveries (done_at) WHERE done_at IS NOT NULL;

-- Every attempt, for the dashboard's delivery log.
CREATE TABLE delivery_attempts (
    site_id     uuid NOT NULL,
    delivery_id bigint NOT NULL,
    attempt     integer NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    status      integer,
    latency_ms  integer NOT NULL,
    error       text CHECK (length(error) <= 1000),
    response    text CHECK (length(response) <= 2048),
    PRIMARY KEY (site_id, delivery_id, attempt),
    FOREIGN KEY (site_id, delivery_id) REFERENCES deliveries (site_id, id) ON DELETE CASCADE
);

-- Whether new leads are e-mailed: set by each origin at start from its
-- LISTGATE_SMTP_URL (every origin of a deployment has the same). Off, no
-- e-mail delivery is queued. One row.
CREATE TABLE delivery_settings (
    email boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX delivery_settings_one_row ON delivery_settings ((true));
INSERT INTO delivery_settings DEFAULT VALUES;

CREATE FUNCTION events_fan_out_leads() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    queued boolean;
BEGIN
    -- A held delivery is finished until a replay (done_at, from which the
    -- sweep keeps it store.DeliveryRetention), as one a worker holds.
    INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id, payload, state, done_at)
    SELECT NEW.site_id, w.id, NEW.id, NEW.type, (NEW.payload->>'lead_id')::bigint, NEW.payload,
           CASE WHEN w.enabled THEN 'pending' ELSE 'held' END, CASE WHEN w.enabled THEN NULL ELSE now() END
    FROM webhook_endpoints w
    WHERE w.site_id = NEW.site_id AND NEW.type = ANY (w.events);
    queued := FOUND;
    IF NEW.type = 'lead.created' AND (SELECT email FROM delivery_settings) THEN
        INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id, payload)
        VALUES (NEW.site_id, NULL, NEW.id, NEW.type, (NEW.payload->>'lead_id')::bigint, NEW.payload);
        queued := true;
    END IF;
    -- Workers wake on it; a lead with nothing to deliver costs no NOTIFY
    -- (which serializes committing transactions).
    IF queued THEN
        PERFORM pg_notify('listgate_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER events_fan_out_leads AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.type LIKE 'lead.%') EXECUTE FUNCTION events_fan_out_leads();
