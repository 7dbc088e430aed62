-- The text-search vector was a generated column, which Postgres computes
-- again on every UPDATE of a listing, even when none of the text it is made
-- of changed; to_tsvector is most of a listing row's cost, and an update
-- feed mostly changes prices and statuses. It is now an ordinary column
-- kept by triggers: computed on INSERT, and on an UPDATE only when the
-- address, headline, category or description changed. Same expression,
-- so the same vectors and the same search results; DROP EXPRESSION keeps
-- the stored vectors without rewriting the table.
ALTER TABLE listings ALTER COLUMN search DROP EXPRESSION;

CREATE FUNCTION listings_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Where a listing is ranks above what its text says.
    NEW.search := setweight(pg_catalog.to_tsvector('pg_catalog.simple', coalesce(NEW.search_address, '')), 'A') ||
                  setweight(pg_catalog.to_tsvector('pg_catalog.simple', coalesce(NEW.headline, '')), 'B') ||
                  setweight(pg_catalog.to_tsvector('pg_catalog.english', coalesce(NEW.headline, '')), 'B') ||
                  setweight(pg_catalog.to_tsvector('pg_catalog.english', coalesce(NEW.category, '')), 'C') ||
                  setweight(pg_catalog.to_tsvector('pg_catalog.english', coalesce(NEW.description, '')), 'D');
    RETURN NEW;
END
$$;

CREATE TRIGGER listings_search_insert BEFORE INSERT ON listings
    FOR EACH ROW EXECUTE FUNCTION listings_search();
CREATE TRIGGER listings_search_update BEFORE UPDATE ON listings
    FOR EACH ROW
    WHEN (OLD.search_address IS DISTINCT FROM NEW.search_address OR OLD.headline IS DISTINCT FROM NEW.headline
          OR OLD.category IS DISTINCT FROM NEW.category OR OLD.description IS DISTINCT FROM NEW.description
          OR NEW.search IS DISTINCT FROM OLD.search)
    EXECUTE FUNCTION listings_search();
