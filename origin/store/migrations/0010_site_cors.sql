-- The browser origins a site allows to call the API with its keys (CORS),
-- each in the one form of pkg/cors.Normalize (scheme://host[:port]), at
-- most cors.MaxOrigins; store.SetCORS normalizes them. Edges learn them
-- with a key's introspection, from GET /internal/v1/sites/{id}/cors, and
-- from the site.cors_changed events the outbox now accepts.
ALTER TABLE sites ADD COLUMN cors_origins text[] NOT NULL DEFAULT '{}'
    CONSTRAINT sites_cors_origins_count CHECK (cardinality(cors_origins) <= 20);

ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('key.revoked', 'key.changed',
    'site.plan_changed', 'site.content_changed', 'site.cors_changed'));
