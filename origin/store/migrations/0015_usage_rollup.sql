-- Usage per hour: the per-minute counts of usage_minutes rolled up by UTC
-- hour, kept for 400 days (usage_minutes for 48 hours), so the dashboard
-- charts days and months in each site's own time zone. AddUsage adds a
-- report to both tables in one statement, so an hour is always the sum of
-- the reports of its minutes, whatever the sweep has deleted of them since.

CREATE TABLE usage_hours (
    site_id  uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    hour     timestamptz NOT NULL CHECK (date_trunc('hour', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = hour),
    requests bigint NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (site_id, hour)
);

-- Usage reports applied, by report id: an edge that did not get the answer
-- to a report sends it again with the same id, and the origin applies each
-- id once. Rows are swept after a day; an edge gives a report up long
-- before.
CREATE TABLE usage_reports (
    report_id  uuid PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_reports_applied ON usage_reports (applied_at);

-- The hours of the minutes kept so far.
INSERT INTO usage_hours (site_id, hour, requests)
SELECT site_id, date_trunc('hour', minute AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', sum(requests)
FROM usage_minutes
GROUP BY 1, 2;
