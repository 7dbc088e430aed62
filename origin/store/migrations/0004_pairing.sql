-- The WordPress pairing flow (pairing/, API.md "Pairing a WordPress site"):
-- what it needs beyond the pairings table of 0001. Nothing wrote pairings
-- before this migration, so the new NOT NULL column needs no default.

ALTER TABLE pairings
    -- SHA-256 of the user code's first group: an entered code is looked up
    -- by it, and a wrong code that shares it counts against the live code.
    ADD COLUMN user_code_group  bytea NOT NULL CHECK (octet_length(user_code_group) = 32),
    -- The least time between polls; slow_down raises it by 5 s.
    ADD COLUMN poll_interval_ms integer NOT NULL DEFAULT 5000 CHECK (poll_interval_ms BETWEEN 1000 AND 3600000),
    -- The dashboard account that approved or denied, or 'operator' (CLI).
    ADD COLUMN decided_by       text CHECK (length(decided_by) <= 200),
    ADD COLUMN delivered_at     timestamptz,
    ADD COLUMN disconnected_at  timestamptz,
    -- The pairing of the same site and home URL whose delivery revoked
    -- this one's key.
    ADD COLUMN replaced_by      uuid,
    ADD CONSTRAINT pairings_site_name_length CHECK (length(site_name) <= 200),
    ADD CONSTRAINT pairings_plugin_version_length CHECK (length(plugin_version) <= 50),
    ADD CONSTRAINT pairings_device_code_hash_length CHECK (octet_length(device_code_hash) = 32),
    ADD CONSTRAINT pairings_user_code_hash_length CHECK (octet_length(user_code_hash) = 32);

-- Entered codes are found by their first group among the live pairings.
DROP INDEX pairings_user_code;
CREATE INDEX pairings_user_code_group ON pairings (user_code_group, expires_at);
-- A pending user code names one pairing.
CREATE UNIQUE INDEX pairings_pending_user_code ON pairings (user_code_hash) WHERE status = 'pending';
-- One working pairing per site and home URL: re-pairing replaces it.
CREATE UNIQUE INDEX pairings_site_home_delivered ON pairings (site_id, home_url) WHERE status = 'delivered';
-- A key is issued to one pairing, and DELETE /v1/pairing finds it by the key.
CREATE UNIQUE INDEX pairings_api_key ON pairings (api_key_id) WHERE api_key_id IS NOT NULL;
-- Stale pending and approved pairings are marked expired in bulk.
CREATE INDEX pairings_live_expiry ON pairings (expires_at) WHERE status IN ('pending', 'approved');
