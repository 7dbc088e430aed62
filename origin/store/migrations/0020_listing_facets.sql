-- How many of a site's listings have each status, and, by status, each
-- value a search form lists or the stats summary counts (type, category,
-- suburb, state, postcode, bedrooms, bathrooms, car spaces, and each shown
-- price by type). GET /fields and /stats/summary read these counts, a few
-- hundred rows, where they counted and sorted every listing of the site
-- (a site of 100,000 listings: a quarter of a second each).
--
-- Kept by statement triggers on listings, in the transaction that changes
-- them, so a read sees the counts of the listings it would see. A
-- transaction adds to rows of its own (shard: its backend's process id),
-- which it holds until it commits: two importers' transactions never wait
-- for each other's counts, and cannot deadlock on them. Reads sum the
-- shards; listing_facets_compact moves a backend's rows into shard 0 (the
-- importer calls it on each of its connections when an import ends), in a
-- statement of its own, and drops the site's rows that fell to 0. Rows a
-- backend added outside an import stay in its shard, counted.
--
-- No foreign key to sites: checking it for each row an import's statement
-- adds cost a third of the counting. A site's counts go with it by the
-- trigger on sites below, and the listings a site's deletion removes are
-- not counted.
CREATE TABLE listing_facets (
    site_id uuid NOT NULL,
    status  text NOT NULL,
    field   text NOT NULL,
    value   text NOT NULL,
    shard   int NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (site_id, status, field, value, shard)
);

-- The counted values of a set of listings rows, each with sign.
CREATE FUNCTION listing_facet_values(r listings, sign int)
RETURNS TABLE (site_id uuid, status text, field text, value text, n int)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT r.site_id, r.status, k.field, k.value, sign
    FROM (VALUES ('type', r.type), ('category', r.category), ('suburb', r.suburb), ('state', r.state),
                 ('postcode', r.postcode), ('bedrooms', r.bedrooms::text), ('bathrooms', r.bathrooms::text),
                 ('car_spaces', r.car_spaces::text),
                 ('price:' || r.type, CASE WHEN r.price_shown THEN r.price::text END)) AS k (field, value)
    WHERE k.value IS NOT NULL
$$;

CREATE FUNCTION listing_facets_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The rows of a site being deleted (its listings go with it) are not
    -- counted: the site's counts go with the site.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO listing_facets AS f (site_id, status, field, value, shard, n)
        SELECT v.site_id, v.status, v.field, v.value, pg_backend_pid(), sum(v.n)
        FROM new_rows r, listing_facet_values(r, 1) v
        WHERE EXISTS (SELECT 1 FROM sites s WHERE s.id = v.site_id)
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (site_id, status, field, value, shard) DO UPDATE SET n = f.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO listing_facets AS f (site_id, status, field, value, shard, n)
        SELECT v.site_id, v.status, v.field, v.value, pg_backend_pid(), sum(v.n)
        FROM (SELECT v.* FROM new_rows r, listing_facet_values(r, 1) v
              UNION ALL
              SELECT v.* FROM old_rows r, listing_facet_values(r, -1) v) v
        WHERE EXISTS (SELECT 1 FROM sites s WHERE s.id = v.site_id)
        GROUP BY 1, 2, 3, 4 HAVING sum(v.n) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (site_id, status, field, value, shard) DO UPDATE SET n = f.n + excluded.n;
    ELSE
        INSERT INTO listing_facets AS f (site_id, status, field, value, shard, n)
        SELECT v.site_id, v.status, v.field, v.value, pg_backend_pid(), sum(v.n)
        FROM old_rows r, listing_facet_values(r, -1) v
        WHERE EXISTS (SELECT 1 FROM sites s WHERE s.id = v.site_id)
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (site_id, status, field, value, shard) DO UPDATE SET n = f.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION listing_facets_site_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM listing_facets WHERE site_id = OLD.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER listing_facets_site_deleted AFTER DELETE ON sites
    FOR EACH ROW EXECUTE FUNCTION listing_facets_site_deleted();

CREATE TRIGGER listing_facets_insert AFTER INSERT ON listings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_facets_count();
CREATE TRIGGER listing_facets_update AFTER UPDATE ON listings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_facets_count();
CREATE TRIGGER listing_facets_delete AFTER DELETE ON listings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_facets_count();

-- The listings already stored.
INSERT INTO listing_facets (site_id, status, field, value, shard, n)
SELECT v.site_id, v.status, v.field, v.value, 0, sum(v.n)
FROM listings r, listing_facet_values(r, 1) v
GROUP BY 1, 2, 3, 4;

-- Moves the counts this backend added to site's rows into shard 0, and
-- drops the site's counts that fell to 0. The site is locked first (as a
-- row a foreign key would lock): a site deleted meanwhile would miss the
-- rows moved, and its deletion, waiting for this statement's rows while
-- holding those of shard 0 this statement next needs, could deadlock.
CREATE FUNCTION listing_facets_compact(site uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM sites WHERE id = site FOR KEY SHARE;
    IF NOT FOUND THEN
        DELETE FROM listing_facets WHERE site_id = site;
        RETURN;
    END IF;
    WITH moved AS (
        DELETE FROM listing_facets WHERE site_id = site AND shard = pg_backend_pid()
        RETURNING status, field, value, n)
    INSERT INTO listing_facets AS f (site_id, status, field, value, shard, n)
    SELECT site, m.status, m.field, m.value, 0, sum(m.n) FROM moved m
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (site_id, status, field, value, shard) DO UPDATE SET n = f.n + excluded.n;
    DELETE FROM listing_facets WHERE site_id = site AND shard = 0 AND n = 0;
END
$$;

-- TRUNCATE removes every listing without a row's trigger: the counts go
-- with them. (A data-only restore that loads listing_facets and then the
-- listings with their triggers enabled counts them twice: restore with
-- --disable-triggers.)
CREATE FUNCTION listing_facets_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM listing_facets;
    RETURN NULL;
END
$$;
CREATE TRIGGER listing_facets_truncated AFTER TRUNCATE ON listings
    FOR EACH STATEMENT EXECUTE FUNCTION listing_facets_truncated();
