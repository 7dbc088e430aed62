-- Abuse limits shared by every origin (store.WindowLimiter): pairing starts
-- and wrong user codes per client IP and per account, failed dashboard
-- sign-ins per IP and per e-mail. One row per scope and key: the current
-- fixed window, from the key's first event in it. Keys are SHA-256 of the
-- IP or e-mail. Not a tenant table: rows belong to no site.
CREATE TABLE limit_windows (
    scope      text NOT NULL CHECK (length(scope) BETWEEN 1 AND 64),
    key_hash   bytea NOT NULL CHECK (octet_length(key_hash) = 32),
    started_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    n          integer NOT NULL CHECK (n >= 0),
    PRIMARY KEY (scope, key_hash)
);
CREATE INDEX limit_windows_expiry ON limit_windows (expires_at);
