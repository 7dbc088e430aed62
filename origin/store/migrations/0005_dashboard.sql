-- The staff dashboard (origin/dashboard): accounts own sites, users of an
-- account sign in with e-mail and password, and sessions live here.

CREATE TABLE accounts (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A site belongs to at most one account; a site without one is seen by no
-- dashboard user (only the CLI).
ALTER TABLE sites ADD COLUMN account_id uuid REFERENCES accounts (id) ON DELETE SET NULL;
CREATE INDEX sites_account ON sites (account_id) WHERE account_id IS NOT NULL;

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- Stored lower-cased; one user per address.
    email         text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
    -- bcrypt hash of the password.
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dashboard_sessions (
    -- SHA-256 of the cookie's token: the token itself is never stored.
    token_hash bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The synchronizer token every form of the session carries.
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
