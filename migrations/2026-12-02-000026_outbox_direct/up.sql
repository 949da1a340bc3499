-- A dead letter's message goes out straight from its `outbox_events` record: a worker
-- claims the record (a lease on the narrow event row), sends one message per subscribed
-- sink and writes each sink's outbox row once, with what the sink answered, deleting the
-- record when every sink's row is written. Rows the budget holds, retries and rows given
-- back are written as before and go through the outbox's claim.
--
-- Why: the fan-out wrote each row pending (a heap row and five index entries, through
-- ON CONFLICT's speculative insertion), the claim rewrote it, and the record rewrote it
-- again (a non-HOT update: `status` is in four index predicates), about 120 µs of
-- PostgreSQL per message on the reference machine; the outbox drained at 19 % of plain
-- POSTs. Claiming the record and writing the row once, ended, is about 45 µs.
--
-- Nothing is lost, and nothing is sent twice by a worker that follows the rules: the
-- record commits with the dead letter and is deleted only in the statement that writes
-- its last sink's row; a worker that dies leaves the claim to lapse, and the next claim
-- skips every sink whose row exists (a pair's row id is made from the record's id and
-- the sink's, so the check is one primary-key probe and a late writer's insert is a
-- no-op).

-- Room on each page for the claim to write its new version beside the old (HOT: the
-- claim column is in no index).
ALTER TABLE outbox_events ADD COLUMN claimed_until timestamptz;
ALTER TABLE outbox_events SET (fillfactor = 50);

-- The outbox row id of (record, sink): the record's id in the first 48 bits (rows of
-- newer records sort after older ones, so the primary key grows at its right edge),
-- then version 8 (RFC 9562, custom) and 74 bits of the sink's id. Ids up to 2^48.
CREATE FUNCTION switchboard_outbox_pair_id(event_id bigint, sink_id uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (lpad(to_hex(event_id), 12, '0') || '8' || substr(replace(sink_id::text, '-', ''), 1, 3) || '8'
        || substr(replace(sink_id::text, '-', ''), 4, 15))::uuid;

-- Claims up to `batch` records (oldest first; SKIP LOCKED and a lease, so instances
-- share them and a dead worker's are taken over) and returns one row per subscribed
-- sink whose outbox row is not written yet, routed exactly as the fan-out routes:
-- `relay.exhausted` when the todo's history holds relay attempts, else
-- `todo.dead_lettered`; the opt-in excerpt if any matching subscription of the sink
-- asks for it. A record with no such sink left comes back once with `sink_id` NULL,
-- for the worker to delete.
CREATE FUNCTION switchboard_claim_outbox_events(claim_seconds integer, batch integer)
RETURNS TABLE (event_ref bigint, id uuid, sink_id uuid, event text, todo_id uuid, endpoint_id uuid,
               include_excerpt boolean, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH taken AS (
        UPDATE outbox_events SET claimed_until = now() + make_interval(secs => claim_seconds)
        WHERE outbox_events.id = ANY (ARRAY(
            SELECT e.id FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
            ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
        RETURNING *
    ), raised AS (
        SELECT t.*,
               CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.todo_id
                                   AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event
        FROM taken t
    ), pairs AS (
        SELECT DISTINCT ON (r.id, k.id) r.id AS event_ref, switchboard_outbox_pair_id(r.id, k.id) AS id,
               k.id AS sink_id, r.raised_event AS event, r.todo_id, r.endpoint_id, s.include_excerpt, r.created_at
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE r.raised_event = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0
               OR EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id AND e.webhook_id = ANY (s.webhook_ids)))
        ORDER BY r.id, k.id, s.include_excerpt DESC
    ), open AS (
        SELECT p.* FROM pairs p WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = p.id)
    )
    SELECT o.event_ref, o.id, o.sink_id, o.event, o.todo_id, o.endpoint_id, o.include_excerpt, o.created_at
    FROM open o
    UNION ALL
    SELECT t.id, NULL::uuid, NULL::uuid, NULL::text, t.todo_id, t.endpoint_id, false, t.created_at
    FROM taken t WHERE NOT EXISTS (SELECT 1 FROM open o WHERE o.event_ref = t.id);
END $$;

-- The fan-out of migration `outbox_fanout`, for an instance of an older release running
-- beside this one: it leaves claimed records alone and writes a sink's row under the
-- pair's id, once (a row a newer worker wrote for that sink is not written again).
CREATE OR REPLACE FUNCTION switchboard_fan_out_outbox(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    taken_count integer;
BEGIN
    PERFORM set_config('switchboard.fanning_out', 'on', true);
    WITH taken AS (
        DELETE FROM outbox_events
        WHERE id = ANY (ARRAY(SELECT e.id FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
                              ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
        RETURNING *
    ), raised AS (
        SELECT t.*,
               CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.todo_id
                                   AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event
        FROM taken t
    ), queued AS (
        INSERT INTO outbox (id, sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt,
                            created_at)
        SELECT DISTINCT ON (r.id, k.id) switchboard_outbox_pair_id(r.id, k.id), k.id, r.scope_id, r.raised_event, 'high',
               'dead_letter:' || r.todo_id || ':' || r.dead_letter_count, r.todo_id, r.endpoint_id,
               s.include_excerpt, r.created_at
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE r.raised_event = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0
               OR EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id AND e.webhook_id = ANY (s.webhook_ids)))
        ORDER BY r.id, k.id, s.include_excerpt DESC
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) INTO taken_count FROM taken;
    PERFORM set_config('switchboard.fanning_out', 'off', true);
    RETURN taken_count;
END $$;

-- Only a pending row is work a claim can take: a row the worker writes ended (sent,
-- undeliverable) or held wakes nobody.
CREATE OR REPLACE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('switchboard.fanning_out', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM queued WHERE status = 'pending') AND NOT EXISTS (
        SELECT 1 FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = o.id)) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;
