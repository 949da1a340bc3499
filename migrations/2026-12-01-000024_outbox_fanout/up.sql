-- A dead letter reaches the outbox in two steps: its transaction records ONE event row,
-- whatever the number of sinks; the outbox worker fans each event out to one outbox row
-- per subscribed sink, in batches, off the dead letter's commit path.
--
-- Why: one outbox row per sink in the dead letter's own transaction (a heap row and five
-- index entries each, three of them at random places in their index) cost the agent's
-- fail 28 % of its rate with one sink and 37-46 % with five (the outbox benchmark). An
-- event row is narrow, appended at the end of its one index, and the same for any
-- number of sinks.
--
-- Nothing is lost: the event commits with the dead letter (a rolled-back fail leaves
-- none), and a worker deletes it in the same statement that inserts its outbox rows.
-- A binary older than this migration does not fan out: once it has run, at least one
-- instance must be of this release or newer, or dead letters wait in outbox_events
-- (not lost: the next such instance sends them).
-- Routing is decided at fan-out against the subscriptions then, milliseconds later.
CREATE TABLE outbox_events (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope_id          uuid NOT NULL,
    todo_id           uuid NOT NULL,
    endpoint_id       uuid NOT NULL,
    queue             text NOT NULL,
    -- The delivery the todo came from (webhook filters), if any.
    event_id          uuid,
    dead_letter_count integer NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now()
);

-- Every dead letter that is news (a revocation cascade tells each sink once from the
-- cascade itself) of a scope with an enabled sink is recorded for fan-out, whichever
-- statement dead-lettered it (agent fail, operator fail, the lease and interrupt
-- reapers). The worker is woken only when it has nothing else to do (see migration
-- `outbox_wake_when_idle`): no other event waits and no due outbox row is unclaimed.
CREATE OR REPLACE FUNCTION switchboard_outbox_dead_letter() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    INSERT INTO outbox_events (scope_id, todo_id, endpoint_id, queue, event_id, dead_letter_count)
    VALUES (NEW.scope_id, NEW.id, NEW.endpoint_id, NEW.queue, NEW.event_id, NEW.dead_letter_count)
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

-- Fans out up to `batch` events (oldest first; `SKIP LOCKED`, so instances share the
-- work) to one outbox row per enabled sink of the event's scope whose subscriptions
-- match, exactly as the dead letter's own transaction used to: `relay.exhausted` when
-- the todo's history holds relay attempts, else `todo.dead_lettered`; the opt-in
-- excerpt if any matching subscription of the sink asks for it. Deletes the events in
-- the same statement. Returns how many events it took.
CREATE FUNCTION switchboard_fan_out_outbox(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    taken_count integer;
BEGIN
    -- The worker that fans out claims again right after, so its own rows need no
    -- wake-up (and the check for one cost a third of the fan-out).
    PERFORM set_config('switchboard.fanning_out', 'on', true);
    WITH taken AS (
        DELETE FROM outbox_events
        WHERE id = ANY (ARRAY(SELECT id FROM outbox_events ORDER BY id LIMIT batch FOR UPDATE SKIP LOCKED))
        RETURNING *
    ), raised AS (
        SELECT t.*,
               CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.todo_id
                                   AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event
        FROM taken t
    ), queued AS (
        INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt,
                            created_at)
        SELECT DISTINCT ON (r.id, k.id) k.id, r.scope_id, r.raised_event, 'high',
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
        ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held')
        DO UPDATE SET count = outbox.count + 1
        RETURNING 1
    )
    SELECT count(*) INTO taken_count FROM taken;
    PERFORM set_config('switchboard.fanning_out', 'off', true);
    RETURN taken_count;
END $$;

-- The wake-up of migration `outbox_wake_when_idle`, skipped for the worker's own
-- fan-out (see above).
CREATE OR REPLACE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('switchboard.fanning_out', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM queued) AND NOT EXISTS (
        SELECT 1 FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = o.id)) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;
