-- Clients are given only absolute http or https media URLs with a host and
-- no user info (origin/ingest checks each URL of a feed since this
-- version). What was stored before, unchecked, goes: media whose URL is
-- anything else (javascript:, data:, a bare file name, a relative path …)
-- are deleted and such agent photos cleared, and every site that changed
-- gets a site.content_changed event, so that edges drop the pages they
-- cached. The pattern is the ingest's rule in SQL.
WITH bad_media AS (
    DELETE FROM media
    WHERE url ~ '[[:cntrl:]]'
       OR url !~* '^https?://([^/?#@\s\[\]:]+|\[[0-9a-f:.]+\])(:[0-9]*)?([/?#]|$)'
    RETURNING site_id
), bad_photos AS (
    UPDATE agents SET photo_url = NULL, updated_at = now()
    WHERE photo_url ~ '[[:cntrl:]]'
       OR photo_url !~* '^https?://([^/?#@\s\[\]:]+|\[[0-9a-f:.]+\])(:[0-9]*)?([/?#]|$)'
    RETURNING site_id
), changed AS (
    SELECT site_id FROM bad_media UNION SELECT site_id FROM bad_photos
)
INSERT INTO events (site_id, type, payload)
SELECT site_id, 'site.content_changed', jsonb_build_object('site_id', site_id, 'reason', 'media_urls')
FROM changed;

SELECT pg_notify('listgate_events', '');
