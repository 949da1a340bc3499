-- A dead letter's record carries what its message says (the todo's title, cause and
-- attempts, the closing attempt's summary and artifact, the origin, whether the history
-- holds relay attempts), written by the dead letter's own transaction; and the claim of
-- records is leaner: it names the claimed rows by their tuple id instead of looking each
-- up again by key, and probes for rows already written only for a record claimed before
-- (a first claim has none: a record is deleted in the statement that writes its last row).
--
-- Why: the claim (`switchboard_claim_outbox_records`) looked up each record's todo, its
-- attempts twice (the closing one, the relay check), its delivery, its key again for the
-- update and each pair's outbox row: six index descents a message, about half of the
-- claim's PostgreSQL time in the outbox benchmark, and the claim was 45 % of the drain's
-- PostgreSQL time. The dead letter's transaction has the todo at hand and its attempts'
-- pages warm.
--
-- The facts are the dead letter's as it was decided, not as the todo is when a worker
-- gets to it (an operator's retry in between no longer changes what the message says).
-- A record written before this migration (or by an instance of the previous release
-- during a rolling upgrade) has `relay` NULL: its worker reads the facts itself, as
-- before. The previous release's claim functions stay for its instances.

SET LOCAL lock_timeout = '5s';

ALTER TABLE outbox_events
    ADD COLUMN title text,
    ADD COLUMN dead_reason text,
    ADD COLUMN attempt integer,
    ADD COLUMN max_attempts integer,
    ADD COLUMN source text,
    ADD COLUMN webhook_id uuid,
    ADD COLUMN summary text,
    ADD COLUMN artifact text,
    -- Whether the todo's history holds relay attempts (`relay.exhausted`); NULL: the
    -- record carries no facts (written by an older trigger).
    ADD COLUMN relay boolean,
    -- Whether the claim that holds the record took it over from an earlier claim (which
    -- may have written some sinks' rows). Set by the claim from the claim it replaces.
    ADD COLUMN reclaimed boolean NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION switchboard_outbox_dead_letter() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
    closing record;
    from_webhook uuid;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    -- One walk of the todo's attempts: the closing one's summary and artifact, and
    -- whether any was a relay's.
    SELECT (array_agg(a.summary ORDER BY a.seq DESC))[1] AS summary,
           (array_agg(a.artifact ORDER BY a.seq DESC))[1] AS artifact,
           coalesce(bool_or(a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'), false) AS relay
    INTO closing
    FROM todo_attempts a WHERE a.todo_id = NEW.id;
    IF NEW.event_id IS NOT NULL THEN
        SELECT e.webhook_id INTO from_webhook FROM events e WHERE e.id = NEW.event_id;
    END IF;
    INSERT INTO outbox_events (scope_id, todo_id, endpoint_id, queue, event_id, dead_letter_count, title, dead_reason,
                               attempt, max_attempts, source, webhook_id, summary, artifact, relay)
    VALUES (NEW.scope_id, NEW.id, NEW.endpoint_id, NEW.queue, NEW.event_id, NEW.dead_letter_count, NEW.title,
            NEW.dead_reason, NEW.attempt, NEW.max_attempts, NEW.source, from_webhook, closing.summary,
            closing.artifact, closing.relay)
    RETURNING id INTO recorded;
    -- From the newest record down (and anything newer): the oldest records are the
    -- ones fan-out deleted, whose dead index entries a forward scan would walk first.
    IF EXISTS (SELECT 1 FROM outbox_events WHERE id < recorded ORDER BY id DESC LIMIT 1)
       OR EXISTS (SELECT 1 FROM outbox_events WHERE id > recorded) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM outbox o WHERE o.status = 'pending' AND o.next_attempt_at <= now()
                 AND (o.claimed_until IS NULL OR o.claimed_until < now())) THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('switchboard_outbox', '');
    RETURN NULL;
END $$;

-- Claims up to `batch` records (oldest first; SKIP LOCKED and a lease, so instances
-- share them and a dead worker's are taken over) and returns one row per subscribed
-- sink whose outbox row is not written yet, routed as before (`relay.exhausted` when the
-- todo's history holds relay attempts, else `todo.dead_lettered`; the opt-in excerpt if
-- any matching subscription of the sink asks for it), with the record's scope and
-- dead-letter count (for the row the worker writes) and its facts. A record with no such
-- sink left comes back once with `sink_id` NULL, for the worker to delete.
--
-- The locked rows are updated by tuple id: a row locked here cannot move before the
-- update (a row that moved between the snapshot and the lock is found by its new tuple
-- id, or, if not, is left unclaimed this time, never claimed twice).
CREATE FUNCTION switchboard_claim_outbox_messages(claim_seconds integer, batch integer)
RETURNS TABLE (event_ref bigint, id uuid, sink_id uuid, event text, todo_id uuid, endpoint_id uuid,
               record_scope uuid, dead_letter_count integer, include_excerpt boolean, created_at timestamptz,
               fact_todo_id uuid, queue text, title text, dead_reason text, attempt integer, max_attempts integer,
               summary text, artifact text, source text, webhook_id uuid, excerpt text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH taken AS MATERIALIZED (
        UPDATE outbox_events SET claimed_until = now() + make_interval(secs => claim_seconds),
                                 reclaimed = outbox_events.claimed_until IS NOT NULL
        WHERE outbox_events.ctid = ANY (ARRAY(
            SELECT e.ctid FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
            ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
          AND (outbox_events.claimed_until IS NULL OR outbox_events.claimed_until < now())
        RETURNING *
    ), raised AS MATERIALIZED (
        SELECT tk.*,
               CASE WHEN tk.relay IS NULL
                    THEN EXISTS (SELECT 1 FROM todo_attempts y WHERE y.todo_id = tk.todo_id
                                   AND (y.relay OR y.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    ELSE tk.relay END AS with_relay,
               CASE WHEN tk.relay IS NULL AND tk.event_id IS NOT NULL
                    THEN (SELECT ev.webhook_id FROM events ev WHERE ev.id = tk.event_id)
                    ELSE tk.webhook_id END AS from_webhook
        FROM taken tk
    ), pairs AS (
        SELECT DISTINCT ON (r.id, k.id) r.*,
               CASE WHEN r.with_relay THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event,
               switchboard_outbox_pair_id(r.id, k.id) AS pair_id, k.id AS pair_sink,
               s.include_excerpt AS with_excerpt
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE (CASE WHEN r.with_relay THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END) = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0 OR r.from_webhook = ANY (s.webhook_ids))
        ORDER BY r.id, k.id, s.include_excerpt DESC
    ), open AS MATERIALIZED (
        SELECT p.* FROM pairs p
        WHERE NOT p.reclaimed OR NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = p.pair_id)
    )
    -- Facts only where the record carries them and no excerpt is wanted (the worker
    -- reads the todo for those).
    SELECT o.id, o.pair_id, o.pair_sink, o.raised_event, o.todo_id, o.endpoint_id, o.scope_id, o.dead_letter_count,
           o.with_excerpt, o.created_at,
           CASE WHEN o.relay IS NOT NULL AND NOT o.with_excerpt THEN o.todo_id END, o.queue, o.title, o.dead_reason,
           o.attempt, o.max_attempts, o.summary, o.artifact, o.source, o.from_webhook, NULL::text
    FROM open o
    UNION ALL
    SELECT t.id, NULL::uuid, NULL::uuid, NULL::text, t.todo_id, t.endpoint_id, t.scope_id, t.dead_letter_count, false,
           t.created_at, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::integer, NULL::text,
           NULL::text, NULL::text, NULL::uuid, NULL::text
    FROM taken t WHERE NOT EXISTS (SELECT 1 FROM open o WHERE o.id = t.id);
END $$;
