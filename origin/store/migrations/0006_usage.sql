-- Usage: requests per minute per site, as the edges count them and report
-- them (POST /internal/v1/usage). Reports of the same minute add up. The
-- dashboard charts the last hour; PruneUsage deletes older rows.

CREATE TABLE usage_minutes (
    site_id  uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    minute   timestamptz NOT NULL CHECK (date_trunc('minute', minute) = minute),
    requests bigint NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (site_id, minute)
);
