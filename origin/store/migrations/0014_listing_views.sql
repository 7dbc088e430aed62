-- Listing views (vendor reports): how many people looked at each listing,
-- counted by the edges from the visitors' browsers (view beacons) and
-- reported in batches (POST /internal/v1/views).

-- views:write is the scope of a site's beacon id, a key that is public by
-- design (it sits in the page source of the agency's site): it is granted
-- alone, never with a scope that reads or writes anything else.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (
    cardinality(scopes) > 0
    AND scopes <@ ARRAY['listings:read', 'agents:read', 'stats:read', 'leads:write', 'views:write']
    AND (NOT scopes @> ARRAY['views:write'] OR scopes <@ ARRAY['views:write']));
-- The site's beacon id (store.BeaconID), kept as it is: it is no secret (it
-- can only count views, and every visitor's browser sees it), and the
-- WordPress pairing and the CLI hand the same one out again. Only a
-- views:write key may have it; a site has one live beacon id at a time.
ALTER TABLE api_keys ADD COLUMN beacon_id text
    CONSTRAINT api_keys_beacon_id_scope CHECK (beacon_id IS NULL OR scopes = ARRAY['views:write']);
CREATE UNIQUE INDEX api_keys_site_beacon ON api_keys (site_id) WHERE beacon_id IS NOT NULL AND revoked_at IS NULL;

-- Views and unique visitors of a listing per day, the day in the site's
-- time zone. No foreign key to listings: the views of a listing stay in
-- history whatever becomes of the listing (a deleted listing keeps its row
-- in listings anyway, status 'deleted'). Reports only add views of
-- listings the site has (store.ApplyViewBatch), so the table grows with
-- real listings and days, never with what a client makes up.
CREATE TABLE listing_views (
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    listing_ref bigint NOT NULL CHECK (listing_ref > 0),
    day         date NOT NULL,
    views       bigint NOT NULL DEFAULT 0 CHECK (views >= 0),
    -- Sum of the unique visitors each edge counted that day (an edge counts
    -- a visitor once a day: docs/operations.md, "Listing views").
    visitors    bigint NOT NULL DEFAULT 0 CHECK (visitors >= 0 AND visitors <= views),
    PRIMARY KEY (site_id, listing_ref, day)
);
-- Top listings of a period: every listing's days of the site in the range.
CREATE INDEX listing_views_site_day ON listing_views (site_id, day) INCLUDE (listing_ref, views, visitors);

-- Reports applied, by batch id: an edge retries a report whose answer it
-- did not get with the same id, and the origin applies each id once. Rows
-- are deleted after 7 days (ApplyViewBatch sweeps in the same transaction);
-- an edge gives up a report long before (docs/operations.md).
CREATE TABLE view_batches (
    batch_id   uuid PRIMARY KEY,
    edge_id    text NOT NULL CHECK (length(edge_id) BETWEEN 1 AND 64),
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX view_batches_applied ON view_batches (applied_at);

-- Leads of a listing per day (the stats' enquiries).
CREATE INDEX leads_site_listing_created ON leads (site_id, listing_ref, created_at) WHERE listing_ref IS NOT NULL;
