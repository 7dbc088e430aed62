-- New lead and media ids no longer count every site's leads and media.
-- Both came from one sequence each, shared by all sites, so a client could
-- subtract two of its own lead_ids (or media_ids) and learn how many leads
-- (or images) the whole platform took in between.
--
-- A new id is now scramble_id(n) of a private counter n: a keyed 4-round
-- Feistel permutation of the 52-bit counter, moved up into
-- [2^52, 2^53). It is one-to-one, so new ids never collide with each other,
-- and above every id handed out before (those came from 1 upwards), which
-- stay as they were; below 2^53, so JSON readers that hold numbers as
-- doubles (JavaScript) read lead_ids exactly. Without the key the order and
-- spacing of ids say nothing. The key is made here, once per database, at
-- random, and lives only in the function's body: a dump and restore keeps
-- it. Replacing the function with another key while the counters go on
-- could repeat an id (the unique constraints would refuse the insert):
-- never do that.
DO $migration$
DECLARE
    k text := md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text);
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION scramble_id(n bigint) RETURNS bigint
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $body$
        DECLARE
            l bigint := n >> 26;
            r bigint := n & 67108863; -- 2^26 - 1
            t bigint;
        BEGIN
            IF n < 0 OR n >= 4503599627370496 THEN -- 2^52
                RAISE EXCEPTION 'scramble_id: counter %% out of range', n;
            END IF;
            FOR i IN 1..4 LOOP
                t := r;
                r := l # (('x' || substr(md5(%L || i || ':' || r), 1, 7))::bit(28)::bigint >> 2);
                l := t;
            END LOOP;
            RETURN 4503599627370496 + (l << 26 | r);
        END
        $body$$f$, k);
END
$migration$;

CREATE SEQUENCE leads_id_counter AS bigint MINVALUE 0 START 0;
CREATE SEQUENCE media_id_counter AS bigint MINVALUE 0 START 0;
ALTER TABLE leads ALTER COLUMN id DROP IDENTITY;
ALTER TABLE leads ALTER COLUMN id SET DEFAULT scramble_id(nextval('leads_id_counter'));
ALTER SEQUENCE leads_id_counter OWNED BY leads.id;
ALTER TABLE media ALTER COLUMN id DROP IDENTITY;
ALTER TABLE media ALTER COLUMN id SET DEFAULT scramble_id(nextval('media_id_counter'));
ALTER SEQUENCE media_id_counter OWNED BY media.id;
