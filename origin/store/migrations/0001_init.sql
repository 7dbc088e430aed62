-- Listgate schema, version 1.
-- Every tenant table leads with site_id (primary keys and indexes), so the
-- schema can be distributed by site later without change.

CREATE TABLE sites (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                   text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    plan                   text NOT NULL CHECK (plan IN ('starter', 'professional', 'enterprise')),
    timezone               text NOT NULL DEFAULT 'Australia/Sydney' CHECK (length(timezone) BETWEEN 1 AND 64),
    default_lead_recipient text CHECK (length(default_lead_recipient) <= 254),
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id           uuid NOT NULL DEFAULT gen_random_uuid(),
    key_hash     bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    hint         text NOT NULL CHECK (length(hint) <= 8),
    name         text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    scopes       text[] NOT NULL CHECK (
                     cardinality(scopes) > 0
                     AND scopes <@ ARRAY['listings:read', 'agents:read', 'stats:read', 'leads:write']),
    source       text NOT NULL CHECK (source IN ('dashboard', 'cli', 'pairing')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (site_id, id),
    UNIQUE (id)
);

CREATE TABLE agents (
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id           bigint GENERATED ALWAYS AS IDENTITY,
    name         text NOT NULL DEFAULT '' CHECK (length(name) <= 200),
    email        text CHECK (length(email) <= 254),
    phone_mobile text CHECK (length(phone_mobile) <= 64),
    phone_office text CHECK (length(phone_office) <= 64),
    phone_ah     text CHECK (length(phone_ah) <= 64),
    photo_url    text CHECK (length(photo_url) <= 2048),
    links        jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, id),
    CHECK (email IS NOT NULL OR name <> '')
);
-- An agent is known by e-mail within a site, or by name when the feed gives no e-mail.
CREATE UNIQUE INDEX agents_site_email ON agents (site_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX agents_site_name ON agents (site_id, name) WHERE email IS NULL;

CREATE TABLE listings (
    site_id        uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    ref            bigint GENERATED ALWAYS AS IDENTITY,
    agency_id      text NOT NULL CHECK (length(agency_id) BETWEEN 1 AND 64),
    unique_id      text NOT NULL CHECK (length(unique_id) BETWEEN 1 AND 128),
    type           text NOT NULL CHECK (type IN ('residential', 'rental', 'land', 'commercial',
                       'commercial_land', 'rural', 'business', 'holiday_rental')),
    status         text NOT NULL CHECK (status IN ('current', 'sold', 'leased', 'withdrawn', 'offmarket', 'deleted')),
    under_offer    boolean NOT NULL DEFAULT false,
    featured       boolean NOT NULL DEFAULT false,
    category       text,
    headline       text,
    description    text,
    -- suburb and postcode only when the feed lets the suburb be shown;
    -- search_address only the parts the feed lets be shown.
    suburb         text,
    state          text,
    postcode       text,
    search_address text,
    -- The sale price or weekly rent, for filters and sorts; price_shown is
    -- false when the feed hides it.
    price          numeric(14, 2),
    price_shown    boolean NOT NULL DEFAULT true,
    bedrooms       integer,
    bathrooms      integer,
    car_spaces     integer,
    search         tsvector GENERATED ALWAYS AS (
                       -- Where a listing is ranks above what its text says.
                       setweight(to_tsvector('simple', coalesce(search_address, '')), 'A') ||
                       setweight(to_tsvector('simple', coalesce(headline, '')), 'B') ||
                       setweight(to_tsvector('english', coalesce(headline, '')), 'B') ||
                       setweight(to_tsvector('english', coalesce(category, '')), 'C') ||
                       setweight(to_tsvector('english', coalesce(description, '')), 'D')) STORED,
    -- The listing as read from the feed, merged across partial updates; the
    -- columns above are copies for filtering, sorting and search.
    doc            jsonb NOT NULL DEFAULT '{}',
    feed_mod_time  timestamptz,
    -- SHA-256 of the last record applied, to count a repeated record as unchanged.
    feed_hash      bytea,
    created_at     timestamptz NOT NULL DEFAULT now(),
    modified_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, ref),
    UNIQUE (site_id, agency_id, unique_id),
    UNIQUE (ref)
);
CREATE INDEX listings_site_modified ON listings (site_id, modified_at DESC, ref DESC);
CREATE INDEX listings_site_unique_id ON listings (site_id, unique_id);
-- The read API's filters and sorts: every query a site makes is an index scan.
CREATE INDEX listings_site_status_modified ON listings (site_id, status, modified_at DESC, ref DESC);
CREATE INDEX listings_site_status_created ON listings (site_id, status, created_at DESC, ref DESC);
CREATE INDEX listings_site_status_price ON listings (site_id, status, price, ref);
CREATE INDEX listings_site_status_price_desc ON listings (site_id, status, price DESC NULLS LAST, ref DESC);
-- Totals (meta.total) of filtered pages are index-only scans of this one.
CREATE INDEX listings_site_status_filters ON listings (site_id, status, type)
    INCLUDE (price, bedrooms, bathrooms, car_spaces, state, postcode, suburb, category, modified_at, featured);
CREATE INDEX listings_site_status_suburb ON listings (site_id, status, lower(suburb), ref);
CREATE INDEX listings_site_featured ON listings (site_id, modified_at DESC, ref DESC) WHERE featured;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX listings_site_search ON listings USING gin (site_id, search);

CREATE TABLE listing_agents (
    site_id     uuid NOT NULL,
    listing_ref bigint NOT NULL,
    position    smallint NOT NULL CHECK (position BETWEEN 1 AND 4),
    agent_id    bigint NOT NULL,
    PRIMARY KEY (site_id, listing_ref, position),
    FOREIGN KEY (site_id, listing_ref) REFERENCES listings (site_id, ref) ON DELETE CASCADE,
    FOREIGN KEY (site_id, agent_id) REFERENCES agents (site_id, id) ON DELETE CASCADE
);
CREATE INDEX listing_agents_agent ON listing_agents (site_id, agent_id);

CREATE TABLE media (
    site_id     uuid NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    listing_ref bigint NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('image', 'floorplan', 'document', 'video', 'link')),
    slot        text NOT NULL CHECK (length(slot) BETWEEN 1 AND 64),
    url         text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    format      text,
    position    integer NOT NULL,
    modified_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, id),
    UNIQUE (site_id, listing_ref, kind, slot),
    UNIQUE (id),
    FOREIGN KEY (site_id, listing_ref) REFERENCES listings (site_id, ref) ON DELETE CASCADE
);

CREATE TABLE inspections (
    site_id     uuid NOT NULL,
    listing_ref bigint NOT NULL,
    starts_at   timestamptz NOT NULL,
    ends_at     timestamptz,
    PRIMARY KEY (site_id, listing_ref, starts_at),
    FOREIGN KEY (site_id, listing_ref) REFERENCES listings (site_id, ref) ON DELETE CASCADE,
    CHECK (ends_at IS NULL OR ends_at >= starts_at)
);

CREATE TABLE leads (
    site_id       uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    listing_ref   bigint,
    type          text NOT NULL CHECK (type IN ('inquiry', 'appraisal', 'rental_application', 'general')),
    priority      text NOT NULL CHECK (priority IN ('hot', 'warm', 'cold')),
    status        text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'contacted', 'qualified', 'closed', 'spam')),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    email         text CHECK (length(email) <= 254),
    email_norm    text,
    phone         text,
    phone_e164    text,
    mobile        text,
    mobile_e164   text,
    message       text CHECK (length(message) <= 5000),
    metadata      jsonb NOT NULL DEFAULT '{}',
    assigned_to   text,
    assigned_agent_id bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, id),
    UNIQUE (id),
    FOREIGN KEY (site_id, listing_ref) REFERENCES listings (site_id, ref),
    FOREIGN KEY (site_id, assigned_agent_id) REFERENCES agents (site_id, id) ON DELETE SET NULL (assigned_agent_id),
    CHECK (email IS NOT NULL OR phone IS NOT NULL OR mobile IS NOT NULL)
);
CREATE INDEX leads_site_created ON leads (site_id, created_at DESC);

-- Every submission is stored, duplicates included, and attached to its lead.
CREATE TABLE lead_submissions (
    site_id     uuid NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    lead_id     bigint NOT NULL,
    key_id      uuid,
    duplicate   boolean NOT NULL,
    request_id  text,
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, id),
    FOREIGN KEY (site_id, lead_id) REFERENCES leads (site_id, id) ON DELETE CASCADE
);
CREATE INDEX lead_submissions_lead ON lead_submissions (site_id, lead_id);

CREATE TABLE lead_assignments (
    site_id     uuid NOT NULL,
    lead_id     bigint NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    agent_id    bigint,
    assigned_to text,
    reason      text NOT NULL CHECK (reason IN ('agent_email', 'listing_agent', 'default_recipient', 'round_robin', 'none', 'manual')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, lead_id, id),
    FOREIGN KEY (site_id, lead_id) REFERENCES leads (site_id, id) ON DELETE CASCADE
);

CREATE TABLE idempotency_keys (
    site_id       uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    key_id        uuid NOT NULL,
    idem_key      text NOT NULL CHECK (length(idem_key) BETWEEN 1 AND 255),
    body_hash     bytea NOT NULL,
    state         text NOT NULL CHECK (state IN ('in_flight', 'done')),
    response_code integer,
    response_body bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (site_id, key_id, idem_key)
);

-- Pairing requests come before any site is chosen; site_id is set on approval.
CREATE TABLE pairings (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id          uuid REFERENCES sites (id) ON DELETE CASCADE,
    device_code_hash bytea NOT NULL UNIQUE,
    user_code_hash   bytea NOT NULL,
    home_url         text NOT NULL CHECK (length(home_url) BETWEEN 1 AND 2048),
    site_name        text,
    plugin_version   text,
    status           text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'delivered', 'expired', 'disconnected')),
    api_key_id       uuid REFERENCES api_keys (id),
    failed_attempts  integer NOT NULL DEFAULT 0,
    client_ip        text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    last_polled_at   timestamptz,
    decided_at       timestamptz
);
CREATE INDEX pairings_user_code ON pairings (user_code_hash) WHERE status = 'pending';
CREATE INDEX pairings_site ON pairings (site_id, created_at DESC);

CREATE TABLE oauth_clients (
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    client_id   text NOT NULL UNIQUE CHECK (length(client_id) BETWEEN 1 AND 64),
    secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    PRIMARY KEY (site_id, client_id)
);

CREATE TABLE oauth_tokens (
    token_hash bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    site_id    uuid NOT NULL,
    client_id  text NOT NULL,
    scope      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    FOREIGN KEY (site_id, client_id) REFERENCES oauth_clients (site_id, client_id) ON DELETE CASCADE
);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
-- Revoking a client deletes its tokens.
CREATE INDEX oauth_tokens_client ON oauth_tokens (site_id, client_id);

CREATE TABLE feed_jobs (
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    id          uuid NOT NULL DEFAULT gen_random_uuid(),
    client_id   text,
    status      text NOT NULL CHECK (status IN ('queued', 'processing', 'done', 'failed')),
    -- The uploaded feed, gzip-compressed, with the root credentials removed.
    body        bytea,
    body_size   bigint NOT NULL DEFAULT 0,
    counts      jsonb NOT NULL DEFAULT '{}',
    errors      jsonb NOT NULL DEFAULT '[]',
    attempts    integer NOT NULL DEFAULT 0,
    -- A worker owns a processing job until lease_until; a job whose lease ran
    -- out (its origin died) is picked up again. On a queued job it is the
    -- time a retry becomes ready (NULL: ready now).
    lease_until timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz,
    PRIMARY KEY (site_id, id),
    UNIQUE (id)
);
CREATE INDEX feed_jobs_pending ON feed_jobs (created_at) WHERE status IN ('queued', 'processing');

-- The outbox: changes edges must learn of, written in the transaction of the
-- change and streamed to edges in id order.
CREATE TABLE events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id    uuid,
    type       text NOT NULL CHECK (type IN ('key.revoked', 'key.changed', 'site.plan_changed', 'site.content_changed')),
    payload    jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_created ON events (created_at);
