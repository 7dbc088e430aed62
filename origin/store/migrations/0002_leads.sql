-- Lead intake (POST /v1/leads): duplicate look-ups, fair round-robin
-- assignment and idempotency-key claims.

-- Duplicate detection looks a contact up within one site and a recent window.
CREATE INDEX leads_site_email_norm ON leads (site_id, email_norm, created_at) WHERE email_norm IS NOT NULL;
CREATE INDEX leads_site_phone_e164 ON leads (site_id, phone_e164, created_at) WHERE phone_e164 IS NOT NULL;
CREATE INDEX leads_site_mobile_e164 ON leads (site_id, mobile_e164, created_at) WHERE mobile_e164 IS NOT NULL;

-- The per-site round-robin counter: a lead assigned by round robin takes
-- the next value with UPDATE … RETURNING in its own transaction, so
-- concurrent leads get consecutive values and the agents equal shares.
CREATE TABLE lead_round_robin (
    site_id uuid PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    next    bigint NOT NULL DEFAULT 0 CHECK (next >= 0)
);

-- Each claim of an idempotency key gets its own id, so that finishing or
-- releasing a claim cannot touch a later claim of the same key (one that
-- took over after the first was abandoned).
ALTER TABLE idempotency_keys ADD COLUMN claim_id uuid;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
