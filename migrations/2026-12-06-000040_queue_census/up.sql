-- The Queues overview (SPEC 13 "Queues overview"): where every queue stands, read by the
-- Board's /queues and GET /api/v1/queues without touching `todos` (issue 39: no new index
-- on `todos` or `todo_attempts`, and the claim cycle no slower).
--
-- `queue_census` is a snapshot, one row per (endpoint, queue), rewritten by the census
-- worker every SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS (one instance at a time, under the
-- lock of `queue_census_runs`' row). Its counts of what is live come from the partial
-- indexes the claim and the reapers already keep (pending, claimed, interrupted,
-- retrying); its counts of what happened come from `queue_minutes`.
--
-- `queue_minutes` counts per minute what finished: completions and dead letters read off
-- `todos_retention_idx` (terminal rows by `updated_at`), each exactly once between two
-- watermarks (queues/rules/watermark.rs says why the watermark is safe), and failed
-- attempts rolled up from `queue_failed_attempts`.
--
-- `queue_failed_attempts` is an append-only log the trigger below writes when a history
-- row records a failed attempt (agent fail, lease lapse, interrupt lapse). A completion
-- writes no history row (the attempt stays on the todo row), so the claim → complete
-- cycle never fires it; a failing cycle pays one insert per statement. Append-only with
-- no index, so concurrent failures never wait for one another; the census deletes what
-- it rolls up in the same transaction, so every row is counted once.
--
-- Additive: three new tables, one new function and one new trigger.
SET LOCAL lock_timeout = '5s';

CREATE TABLE queue_census (
    endpoint_id               uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    queue                     text NOT NULL,
    scope_id                  uuid NOT NULL,
    pending                   bigint NOT NULL DEFAULT 0,
    -- More than `pending` wait: the census counts at most 10 000 per queue.
    pending_capped            boolean NOT NULL DEFAULT false,
    oldest_pending_at         timestamptz,
    claimed                   bigint NOT NULL DEFAULT 0,
    stalled                   bigint NOT NULL DEFAULT 0,
    interrupted               bigint NOT NULL DEFAULT 0,
    retrying                  bigint NOT NULL DEFAULT 0,
    done_last_hour            bigint NOT NULL DEFAULT 0,
    failed_attempts_last_hour bigint NOT NULL DEFAULT 0,
    dead_last_24h             bigint NOT NULL DEFAULT 0,
    measured_at               timestamptz NOT NULL,
    PRIMARY KEY (endpoint_id, queue)
);
CREATE INDEX queue_census_scope_idx ON queue_census (scope_id);

CREATE TABLE queue_minutes (
    endpoint_id     uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    queue           text NOT NULL,
    minute          timestamptz NOT NULL,
    done            bigint NOT NULL DEFAULT 0 CHECK (done >= 0),
    failed_attempts bigint NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
    dead            bigint NOT NULL DEFAULT 0 CHECK (dead >= 0),
    PRIMARY KEY (endpoint_id, queue, minute)
);

CREATE TABLE queue_failed_attempts (
    endpoint_id uuid NOT NULL,
    queue       text NOT NULL,
    minute      timestamptz NOT NULL,
    n           bigint NOT NULL
);

-- One row: the census's lock (taken FOR UPDATE SKIP LOCKED: a second instance skips its
-- tick) and its watermark.
CREATE TABLE queue_census_runs (
    id          integer PRIMARY KEY CHECK (id = 1),
    watermark   timestamptz,
    measured_at timestamptz
);
INSERT INTO queue_census_runs (id) VALUES (1);

CREATE FUNCTION switchboard_queue_failed_attempts() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_failed_attempts (endpoint_id, queue, minute, n)
    SELECT t.endpoint_id, t.queue, date_trunc('minute', a.ended_at), count(*)
    FROM added a JOIN todos t ON t.id = a.todo_id
    WHERE a.outcome IN ('failed', 'lease_expired', 'reaped', 'interrupt_expired')
      AND a.ended_at IS NOT NULL AND t.queue <> 'quarantine'
    GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$$;

CREATE TRIGGER todo_attempts_failed_tally AFTER INSERT ON todo_attempts
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION switchboard_queue_failed_attempts();
