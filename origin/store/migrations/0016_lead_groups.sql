-- Group commit of lead submissions (origin/store/leads_batch.go): the
-- submissions that arrive together are stored in one transaction, the calls
-- of submit_lead one after the other. A site's round-robin counter, whose
-- row each new lead assigned by round robin locks until its transaction
-- ends, would then be held from the group's first such lead to its commit,
-- and groups would wait on each other for all of that time: in a group,
-- submit_lead leaves round robin to finish_lead_group, the group's last
-- statement, which takes consecutive turns for the group's leads in the
-- order they were created, so the counter's row is locked only from there
-- to the commit.
--
-- submit_lead gains p_defer_round_robin (after p_retry, default false: a call with
-- the thirty arguments of 0013 is unchanged). With it, a new lead that
-- round robin would assign is stored unassigned and without its
-- assignment record, and answered with reason 'round_robin' and nobody
-- assigned; finish_lead_group completes it.
DROP FUNCTION submit_lead(uuid, uuid, text, bigint, text, text, text, text, text, text, text, text, text, text,
    text[], jsonb, jsonb, bigint[], double precision, bigint, text, text, uuid, integer, bytea,
    double precision, double precision, integer, uuid, boolean);

CREATE FUNCTION submit_lead(
    p_site uuid, p_key_id uuid, p_request_id text, p_listing_ref bigint,
    p_type text, p_priority text, p_name text, p_email text, p_email_norm text,
    p_phone text, p_phone_e164 text, p_mobile text, p_mobile_e164 text, p_message text,
    p_phones text[], p_metadata jsonb, p_payload jsonb,
    p_lock_keys bigint[], p_window_secs double precision,
    p_agent_id bigint, p_agent_email text,
    p_idem_key text, p_claim_id uuid, p_response_code integer,
    p_body_hash bytea, p_ttl_secs double precision, p_lease_secs double precision, p_live_class integer,
    p_attempt uuid, p_retry boolean, p_defer_round_robin boolean DEFAULT false,
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

        IF v_round_robin AND p_defer_round_robin THEN
            -- Assigned by finish_lead_group at the end of the group's
            -- transaction, which corrects r_assigned_to, r_reason and the
            -- key's answer. The transaction's list of such leads is a
            -- setting local to it: gone at its end, committed or not.
            r_reason := 'round_robin';
            PERFORM set_config('listgate.lead_group',
                coalesce(current_setting('listgate.lead_group', true), '') || r_lead_id || ',', true);
        ELSIF v_round_robin THEN
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

-- finish_lead_group assigns, by round robin, the leads this transaction
-- created and left to it (submit_lead with p_defer_round_robin), site by
-- site in site id order, each site's in the order they were created: one turn of the site's counter each,
-- consecutive. The group is described by its submissions, in order, as
-- aligned arrays: site, attempt id, and for a submission with an
-- Idempotency-Key its API key id, key and claim id (NULL without). It
-- corrects the answer stored with the key of every submission of the group
-- attached to a lead assigned here (created or duplicate), and returns, for
-- each such submission, its attempt, the lead's assignee and the reason
-- (NULL for a duplicate), and its key and the key's corrected answer (NULL
-- without a key).
CREATE FUNCTION finish_lead_group(p_sites uuid[], p_attempts uuid[], p_key_ids uuid[], p_idem_keys text[],
    p_claims uuid[])
RETURNS TABLE (r_attempt uuid, r_assigned_to text, r_reason text, r_key_id uuid, r_idem_key text, r_response bytea)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_site     uuid;
    v_leads    bigint[];
    v_assigned bigint[] := '{}';
    v_turn     bigint;
    v_pending  bigint[];
BEGIN
    v_pending := string_to_array(rtrim(coalesce(current_setting('listgate.lead_group', true), ''), ','), ',')::bigint[];
    PERFORM set_config('listgate.lead_group', '', true);
    FOR v_site IN SELECT DISTINCT l.site_id FROM leads l WHERE l.id = ANY (v_pending) ORDER BY 1 LOOP
        SELECT array_agg(l.id ORDER BY l.id) INTO v_leads FROM leads l
        WHERE l.id = ANY (v_pending) AND l.site_id = v_site;
        LOOP
            UPDATE lead_round_robin rr SET next = rr.next + cardinality(v_leads) WHERE rr.site_id = v_site
            RETURNING rr.next - cardinality(v_leads) INTO v_turn;
            EXIT WHEN FOUND;
            INSERT INTO lead_round_robin (site_id, next) VALUES (v_site, 0) ON CONFLICT (site_id) DO NOTHING;
        END LOOP;
        -- Lead i (from 0) takes turn v_turn + i: the agent at that
        -- position, modulo their number, among the site's agents with an
        -- e-mail in id order; nobody if there is none any more.
        WITH ag AS (
            SELECT a.id, a.email, row_number() OVER (ORDER BY a.id) - 1 AS i, count(*) OVER () AS n
            FROM agents a WHERE a.site_id = v_site AND btrim(coalesce(a.email, '')) <> ''),
        pick AS (
            SELECT u.lead_id, u.ord, ag.id AS agent_id, ag.email
            FROM unnest(v_leads) WITH ORDINALITY AS u (lead_id, ord)
            LEFT JOIN ag ON ag.i = (v_turn + u.ord - 1) % ag.n),
        assigned AS (
            UPDATE leads l SET assigned_to = pick.email, assigned_agent_id = pick.agent_id FROM pick
            WHERE l.site_id = v_site AND l.id = pick.lead_id AND pick.agent_id IS NOT NULL)
        INSERT INTO lead_assignments (site_id, lead_id, agent_id, assigned_to, reason)
        SELECT v_site, pick.lead_id, pick.agent_id, pick.email,
            CASE WHEN pick.agent_id IS NULL THEN 'none' ELSE 'round_robin' END
        FROM pick ORDER BY pick.ord;
        v_assigned := v_assigned || v_leads;
    END LOOP;
    IF cardinality(v_assigned) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH g AS (
        SELECT * FROM unnest(p_sites, p_attempts, p_key_ids, p_idem_keys, p_claims)
            AS g (site_id, attempt, key_id, idem_key, claim)),
    subs AS (
        SELECT g.*, s.lead_id, s.duplicate, l.status, l.assigned_to
        FROM g
        JOIN lead_submissions s ON s.site_id = g.site_id AND s.lead_id = ANY (v_assigned) AND s.attempt_id = g.attempt
        JOIN leads l ON l.site_id = s.site_id AND l.id = s.lead_id),
    fixed AS (
        UPDATE idempotency_keys k
        SET response_body = lead_response(subs.lead_id, subs.status, subs.duplicate, subs.assigned_to)
        FROM subs
        WHERE subs.idem_key IS NOT NULL AND k.site_id = subs.site_id AND k.key_id = subs.key_id
          AND k.idem_key = subs.idem_key AND k.claim_id = subs.claim AND k.state = 'done'
        RETURNING k.site_id, k.key_id, k.idem_key, k.response_body)
    SELECT subs.attempt, subs.assigned_to,
        CASE WHEN subs.duplicate THEN NULL ELSE (SELECT a.reason FROM lead_assignments a
            WHERE a.site_id = subs.site_id AND a.lead_id = subs.lead_id ORDER BY a.id LIMIT 1) END,
        fixed.key_id, fixed.idem_key, fixed.response_body
    FROM subs
    LEFT JOIN fixed ON fixed.site_id = subs.site_id AND fixed.key_id = subs.key_id AND fixed.idem_key = subs.idem_key;
END
$$;
