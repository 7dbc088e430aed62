-- Lead intake in one round trip (issue #17): submit_lead stores a
-- submission in one call, made outside any transaction block, so that the
-- call is its own transaction. It does what origin/store's SubmitLead did in
-- a transaction of five round trips: the advisory locks, the duplicate
-- search, the assignment, the lead, its assignment, the submission, the
-- outbox event and the Idempotency-Key's response. The rules that decide
-- what to pass (validation, normalisation, lock keys, duplicate keys,
-- references) stay in Go (origin/leads/rules); the function only stores.
--
-- It is VOLATILE, so each statement in it takes a snapshot of its own under
-- READ COMMITTED: the duplicate search, which runs once the advisory locks
-- are held, sees a lead that a racing submission committed while this one
-- waited for them.

-- The attempt a submission was stored by: SubmitLead makes one id per
-- submission and sends it with every try, so that a try after a failure
-- whose outcome it could not know (the connection dropped after the call was
-- sent) finds what the earlier try stored instead of storing it again.
ALTER TABLE lead_submissions ADD COLUMN attempt_id uuid;

-- A JSON string as Go's encoding/json writes it without HTML escaping
-- (rules.Response): to_json escapes the same characters the same way, but
-- for U+2028 and U+2029, which Go escapes and PostgreSQL does not.
CREATE FUNCTION lead_json_string(s text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT replace(replace(to_json(s)::text, chr(8232), '\u2028'), chr(8233), '\u2029')
$$;

-- The body of a stored submission's answer, byte for byte
-- rules.Response.Encode (a test in origin/store holds the two together).
CREATE FUNCTION lead_response(lead_id bigint, status text, duplicate boolean, assigned_to text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT convert_to('{"lead_id":' || lead_id || ',"status":' || lead_json_string(status)
        || ',"duplicate":' || duplicate || ',"assigned_to":' || coalesce(lead_json_string(assigned_to), 'null')
        || E'}\n', 'UTF8')
$$;

-- An Idempotency-Key (p_idem_key) is claimed in the call's own
-- transaction (p_claim_id NULL: the key's row is written in flight, under
-- the attempt's id, and done with the answer before the commit, so no
-- other transaction ever sees it in flight: a request with the same key
-- waits for the call to end, then replays its answer), or was claimed
-- before the call by ClaimIdempotencyKey (p_claim_id, the claim's id; its
-- row is locked first, until the end).
--
-- submit_lead's outcome (r_outcome):
--   created     a new lead, assigned (r_reason says why);
--   duplicate   attached to the earliest lead of the window with the same
--               site, listing (or none), type and a contact in common;
--   repeat      an earlier try of the same attempt (p_attempt) stored this
--               submission: nothing is stored, the earlier try's lead is
--               returned (and its stored answer, with a key);
--   no_site     the site is gone: nothing is stored;
--   claim_lost  the claim p_claim_id is no longer this request's: nothing
--               is stored;
--   replay      the key has an answer stored (r_response_code, r_response)
--               for the same body: nothing is stored;
--   mismatch    the key was used with another body: nothing is stored;
--   in_flight   the key is claimed, committed in flight, by a request that
--               claimed it on its own and is alive, within its lease:
--               nothing is stored.
-- r_response is the answer stored with the key (lead_response), NULL
-- without a key.
CREATE FUNCTION submit_lead(
    p_site uuid, p_key_id uuid, p_request_id text, p_listing_ref bigint,
    p_type text, p_priority text, p_name text, p_email text, p_email_norm text,
    p_phone text, p_phone_e164 text, p_mobile text, p_mobile_e164 text, p_message text,
    p_phones text[], p_metadata jsonb, p_payload jsonb,
    p_lock_keys bigint[], p_window_secs double precision,
    p_agent_id bigint, p_agent_email text,
    p_idem_key text, p_claim_id uuid, p_response_code integer,
    p_body_hash bytea, p_ttl_secs double precision, p_lease_secs double precision, p_live_class integer,
    p_attempt uuid, p_retry boolean,
    OUT r_outcome text, OUT r_lead_id bigint, OUT r_status text, OUT r_duplicate boolean,
    OUT r_assigned_to text, OUT r_reason text, OUT r_response bytea, OUT r_response_code integer)
-- Generic plans from the first call on: with a custom plan, the duplicate
-- search was planned again on every call (0.2 ms, more than it runs), as
-- its generic plan's estimate is higher, though the plan is the same.
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_recipient   text;     -- the site's default lead recipient, '' for none
    v_agents      boolean;  -- the site has an agent with an e-mail
    v_locks       bigint;
    v_claim_state text;
    v_found       boolean;
    v_agent       bigint;
    v_email       text;
    v_round_robin boolean;
    v_repeat_lead bigint;
    v_repeat_duplicate boolean;
    v_claim       uuid;     -- the key's claim: p_claim_id, or the attempt's
    v_hash        bytea;
    v_holder      uuid;
BEGIN
    -- The key's row, first, and locked until the end.
    IF p_claim_id IS NOT NULL THEN
        -- Claimed before the call: a request that takes it over meanwhile
        -- (its lease over, or its owner's liveness lock free) waits, then
        -- finds the answer stored.
        v_claim := p_claim_id;
        SELECT k.state INTO v_claim_state FROM idempotency_keys k
        WHERE k.site_id = p_site AND k.key_id = p_key_id AND k.idem_key = p_idem_key AND k.claim_id = p_claim_id
        FOR UPDATE;
        IF NOT FOUND THEN
            r_outcome := CASE WHEN EXISTS (SELECT 1 FROM sites s WHERE s.id = p_site) THEN 'claim_lost' ELSE 'no_site' END;
            RETURN;
        END IF;
    ELSIF p_idem_key IS NOT NULL THEN
        -- Claimed here, as ClaimIdempotencyKey claims (a new, expired or
        -- abandoned key: one in flight past the lease, or whose owner's
        -- liveness lock is free), but in this transaction.
        IF NOT EXISTS (SELECT 1 FROM sites s WHERE s.id = p_site) THEN
            r_outcome := 'no_site';
            RETURN;
        END IF;
        v_claim := p_attempt;
        FOR v_try IN 1..3 LOOP
            INSERT INTO idempotency_keys AS k
                (site_id, key_id, idem_key, body_hash, state, claim_id, owner, created_at, expires_at)
            VALUES (p_site, p_key_id, p_idem_key, p_body_hash, 'in_flight', p_attempt, NULL,
                now(), now() + make_interval(secs => p_ttl_secs))
            ON CONFLICT (site_id, key_id, idem_key) DO UPDATE SET
                body_hash = EXCLUDED.body_hash, state = 'in_flight', claim_id = EXCLUDED.claim_id, owner = NULL,
                response_code = NULL, response_body = NULL,
                created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE k.expires_at <= now()
               OR (k.state = 'in_flight' AND k.created_at <= now() - make_interval(secs => p_lease_secs))
               OR CASE WHEN k.state = 'in_flight' AND k.owner IS NOT NULL
                       THEN pg_try_advisory_xact_lock(p_live_class, k.owner) ELSE false END
            RETURNING k.state INTO v_claim_state;
            EXIT WHEN FOUND;
            -- A live row holds the key: say which kind.
            SELECT k.body_hash, k.state, k.claim_id, k.response_code, k.response_body
            INTO v_hash, v_claim_state, v_holder, r_response_code, r_response
            FROM idempotency_keys k
            WHERE k.site_id = p_site AND k.key_id = p_key_id AND k.idem_key = p_idem_key AND k.expires_at > now();
            CONTINUE WHEN NOT FOUND; -- released or expired in between: try again
            IF v_hash IS DISTINCT FROM p_body_hash THEN
                r_outcome := 'mismatch';
                r_response_code := NULL;
                r_response := NULL;
                RETURN;
            END IF;
            -- Done by an earlier try of this attempt: the repeat below.
            EXIT WHEN v_claim_state = 'done' AND v_holder = p_attempt;
            IF v_claim_state = 'done' AND r_response_code IS NOT NULL THEN
                r_outcome := 'replay';
                RETURN;
            END IF;
            r_outcome := 'in_flight';
            r_response_code := NULL;
            r_response := NULL;
            RETURN;
        END LOOP;
        r_response_code := NULL;
        r_response := NULL;
        IF v_claim_state IS NULL THEN
            r_outcome := 'in_flight'; -- the key changed hands three times meanwhile
            RETURN;
        END IF;
    END IF;
    -- The site, what assignment needs to know of it, and the advisory
    -- locks, in the order given (rules.LockKeys sorts them, so that two
    -- submissions never wait on each other in a cycle; unnest keeps it):
    -- none is taken when the site is gone.
    SELECT btrim(coalesce(s.default_lead_recipient, '')),
        EXISTS (SELECT 1 FROM agents a WHERE a.site_id = s.id AND btrim(coalesce(a.email, '')) <> ''),
        (SELECT count(pg_advisory_xact_lock(k.lock_key)) FROM unnest(p_lock_keys) AS k (lock_key))
    INTO v_recipient, v_agents, v_locks
    FROM sites s WHERE s.id = p_site;
    IF NOT FOUND THEN
        r_outcome := 'no_site';
        RETURN;
    END IF;

    -- A statement of its own, after the locks: it sees a lead that a
    -- racing submission with a contact in common committed meanwhile.
    SELECT l.id, l.status, l.assigned_to INTO r_lead_id, r_status, r_assigned_to FROM leads l
    WHERE l.site_id = p_site
      AND l.listing_ref IS NOT DISTINCT FROM p_listing_ref
      AND l.type = p_type
      AND l.created_at > now() - make_interval(secs => p_window_secs)
      AND (l.email_norm = p_email_norm OR l.phone_e164 = ANY (p_phones) OR l.mobile_e164 = ANY (p_phones))
    ORDER BY l.created_at, l.id
    LIMIT 1;
    v_found := FOUND;

    -- A try after a failure, or a try that finds a lead with its contacts
    -- (an earlier try of its attempt may have stored it): was it stored?
    -- Any lead with the contacts, however old: the earlier try may have
    -- joined one that has since left the window.
    IF p_attempt IS NOT NULL AND (p_retry OR v_found) THEN
        SELECT s.lead_id, s.duplicate INTO v_repeat_lead, v_repeat_duplicate FROM lead_submissions s
        WHERE s.site_id = p_site AND s.attempt_id = p_attempt
          AND s.lead_id IN (SELECT l.id FROM leads l
              WHERE l.site_id = p_site
                AND l.listing_ref IS NOT DISTINCT FROM p_listing_ref
                AND l.type = p_type
                AND (l.email_norm = p_email_norm OR l.phone_e164 = ANY (p_phones) OR l.mobile_e164 = ANY (p_phones)))
        LIMIT 1;
        IF FOUND THEN
            r_outcome := 'repeat';
            r_lead_id := v_repeat_lead;
            r_duplicate := v_repeat_duplicate;
            SELECT l.status, l.assigned_to INTO r_status, r_assigned_to FROM leads l
            WHERE l.site_id = p_site AND l.id = r_lead_id;
            IF NOT r_duplicate THEN
                SELECT a.reason INTO r_reason FROM lead_assignments a
                WHERE a.site_id = p_site AND a.lead_id = r_lead_id ORDER BY a.id LIMIT 1;
            END IF;
            IF v_claim IS NOT NULL THEN
                SELECT k.response_code, k.response_body INTO r_response_code, r_response FROM idempotency_keys k
                WHERE k.site_id = p_site AND k.key_id = p_key_id AND k.idem_key = p_idem_key
                  AND k.claim_id = v_claim AND k.state = 'done';
            END IF;
            RETURN;
        END IF;
    END IF;
    IF v_claim IS NOT NULL AND v_claim_state <> 'in_flight' THEN
        r_outcome := 'claim_lost';
        RETURN;
    END IF;

    IF v_found THEN
        -- The submission, and its event in the outbox, which the outbox's
        -- trigger fans out into deliveries.
        r_outcome := 'duplicate';
        r_duplicate := true;
        WITH s AS (
            INSERT INTO lead_submissions (site_id, lead_id, key_id, duplicate, request_id, payload, attempt_id)
            VALUES (p_site, r_lead_id, p_key_id, true, p_request_id, p_payload, p_attempt)
            RETURNING id, lead_id)
        INSERT INTO events (site_id, type, payload)
        SELECT p_site, 'lead.duplicate', jsonb_build_object('lead_id', s.lead_id, 'submission_id', s.id) FROM s;
    ELSE
        r_outcome := 'created';
        r_duplicate := false;
        -- Who the lead goes to: the agent agent_email named, else the
        -- listing's first listing agent with an e-mail, else the site's
        -- default recipient, else the next of the site's agents with an
        -- e-mail in round-robin order (below), else nobody.
        IF p_agent_id IS NOT NULL THEN
            v_agent := p_agent_id;
            v_email := p_agent_email;
            r_reason := 'agent_email';
        ELSE
            IF p_listing_ref IS NOT NULL THEN
                SELECT a.id, a.email INTO v_agent, v_email FROM listing_agents la
                JOIN agents a ON a.site_id = la.site_id AND a.id = la.agent_id
                WHERE la.site_id = p_site AND la.listing_ref = p_listing_ref AND btrim(coalesce(a.email, '')) <> ''
                ORDER BY la.position
                LIMIT 1;
                IF FOUND THEN
                    r_reason := 'listing_agent';
                END IF;
            END IF;
            IF r_reason IS NULL AND v_recipient <> '' THEN
                v_email := v_recipient;
                SELECT a.id INTO v_agent FROM agents a WHERE a.site_id = p_site AND lower(a.email) = lower(v_recipient);
                r_reason := 'default_recipient';
            END IF;
        END IF;
        v_round_robin := r_reason IS NULL AND v_agents;
        r_reason := coalesce(r_reason, 'none');
        -- The lead, its assignment (but for round robin's, below), the
        -- submission and its event in the outbox, in one statement.
        WITH l AS (
            INSERT INTO leads (site_id, listing_ref, type, priority, name, email, email_norm, phone, phone_e164,
                mobile, mobile_e164, message, metadata, assigned_to, assigned_agent_id)
            VALUES (p_site, p_listing_ref, p_type, p_priority, p_name, p_email, p_email_norm, p_phone, p_phone_e164,
                p_mobile, p_mobile_e164, p_message, p_metadata, v_email, v_agent)
            RETURNING id, status, assigned_to),
        a AS (
            INSERT INTO lead_assignments (site_id, lead_id, agent_id, assigned_to, reason)
            SELECT p_site, l.id, v_agent, v_email, r_reason FROM l WHERE NOT v_round_robin),
        s AS (
            INSERT INTO lead_submissions (site_id, lead_id, key_id, duplicate, request_id, payload, attempt_id)
            SELECT p_site, l.id, p_key_id, false, p_request_id, p_payload, p_attempt FROM l
            RETURNING id, lead_id),
        e AS (
            INSERT INTO events (site_id, type, payload)
            SELECT p_site, 'lead.created', jsonb_build_object('lead_id', s.lead_id, 'submission_id', s.id) FROM s)
        SELECT l.id, l.status, l.assigned_to INTO r_lead_id, r_status, r_assigned_to FROM l;

        IF v_round_robin THEN
            -- Last, so that the counter's row, which stays locked until the
            -- call's transaction ends, is held for as short a time as can
            -- be: concurrent leads take consecutive turns, and the agents
            -- equal shares. The turn, the agent at the turn's position
            -- (modulo their number) among the site's agents with an
            -- e-mail, in id order (nobody if they went away meanwhile), the
            -- lead's assignment and its record, in one statement.
            FOR v_try IN 1..2 LOOP
                WITH turn AS (
                    UPDATE lead_round_robin rr SET next = rr.next + 1 WHERE rr.site_id = p_site
                    RETURNING rr.next - 1 AS t),
                pick AS (
                    SELECT a.id, a.email FROM (
                        SELECT ag.id, ag.email, row_number() OVER (ORDER BY ag.id) - 1 AS i, count(*) OVER () AS n
                        FROM agents ag WHERE ag.site_id = p_site AND btrim(coalesce(ag.email, '')) <> '') a, turn
                    WHERE a.i = turn.t % a.n),
                assigned AS (
                    UPDATE leads l SET assigned_to = pick.email, assigned_agent_id = pick.id FROM pick
                    WHERE l.site_id = p_site AND l.id = r_lead_id
                    RETURNING l.assigned_to, l.assigned_agent_id)
                INSERT INTO lead_assignments (site_id, lead_id, agent_id, assigned_to, reason)
                SELECT p_site, r_lead_id, assigned.assigned_agent_id, assigned.assigned_to,
                    CASE WHEN assigned.assigned_agent_id IS NULL THEN 'none' ELSE 'round_robin' END
                FROM turn LEFT JOIN assigned ON true
                RETURNING lead_assignments.assigned_to, lead_assignments.reason INTO r_assigned_to, r_reason;
                EXIT WHEN FOUND;
                -- The site's first lead by round robin: its counter starts
                -- at 0.
                INSERT INTO lead_round_robin (site_id, next) VALUES (p_site, 0) ON CONFLICT (site_id) DO NOTHING;
            END LOOP;
        END IF;
    END IF;

    IF v_claim IS NOT NULL THEN
        r_response := lead_response(r_lead_id, r_status, r_duplicate, r_assigned_to);
        r_response_code := p_response_code;
        UPDATE idempotency_keys k SET state = 'done', response_code = p_response_code, response_body = r_response
        WHERE k.site_id = p_site AND k.key_id = p_key_id AND k.idem_key = p_idem_key AND k.claim_id = v_claim;
    END IF;
END
$$;
