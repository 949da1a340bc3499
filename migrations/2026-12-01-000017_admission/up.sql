-- Admission budgets per (endpoint, queue) (SPEC sections 11 and 13): an operator may
-- pause a queue, cap how many of its todos are claimed at once (`max_in_flight`) and
-- how many claims it admits per clock hour (`per_hour`). A claim a budget refuses
-- answers `{empty: true, deferred: <reason>}` and is counted in `queue_deferrals`,
-- which the digest reads.
--
-- A row exists only while it restricts something: the store deletes it, in the
-- changing transaction, when a change sets everything back to the defaults (not a CHECK:
-- the change is an upsert that may pass through the defaults). So "no row" is "no
-- budget", which is all a claim on an unbudgeted queue looks at (one probe of the
-- primary key inside its one statement; see store/todos/claim.rs). A row of defaults
-- written by hand only sends that queue's claims down the budgeted path.
--
-- The row is also the lock that makes a budget exact across instances: a claim on a
-- budgeted queue locks it (FOR NO KEY UPDATE) in a transaction of its own, then counts
-- and claims in a later statement, which sees every claim committed by whoever held the
-- lock before (store/mod.rs, lock order).
--
-- The per-hour window is a fixed clock hour (UTC) kept on the row: `window_hour` is the
-- hour the count belongs to and `window_claims` the claims admitted in it. It is cheap
-- (the row is already locked; one more column written per claim) and exact (every
-- claim of a budgeted queue passes through the row). Counting `todo_attempts` of the
-- last hour instead would need an index on attempts by endpoint and queue that every
-- claim, budgeted or not, would pay for; the window is a clock hour rather than a
-- sliding one for the same reason. When a row is created its window starts with the
-- claims the queue already made this hour (store/admission.rs).

-- The foreign keys below lock `endpoints` and `humans` (SHARE ROW EXCLUSIVE) while the
-- tables are created: give up rather than queue writes behind a long transaction.
-- Additive: two new tables, nothing else changes. What a budgeted claim counts in flight
-- is indexed by migration 000022, built concurrently (a plain build here would hold a
-- SHARE lock on todos, so every todo write would wait for it).
SET LOCAL lock_timeout = '5s';

CREATE TABLE queue_admission (
    endpoint_id   uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    -- A drainable queue name (domain/text.rs `valid_queue_name`), never quarantine.
    queue         text NOT NULL CHECK (queue ~ '^[a-z0-9][a-z0-9._-]{0,63}$' AND queue <> 'quarantine'),
    paused        boolean NOT NULL DEFAULT false,
    max_in_flight integer CHECK (max_in_flight BETWEEN 1 AND 10000),
    per_hour      integer CHECK (per_hour BETWEEN 1 AND 1000000),
    window_hour   timestamptz NOT NULL DEFAULT date_trunc('hour', now(), 'UTC'),
    window_claims integer NOT NULL DEFAULT 0 CHECK (window_claims >= 0),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    updated_by    uuid REFERENCES humans (id) ON DELETE SET NULL,
    PRIMARY KEY (endpoint_id, queue)
);

-- Claims a budget refused, per queue, clock hour (UTC) and reason; one row upserted per
-- refusal in the refusing transaction. The digest's "work deferred" section reads it.
CREATE TABLE queue_deferrals (
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    queue       text NOT NULL,
    hour        timestamptz NOT NULL CHECK (hour = date_trunc('hour', hour, 'UTC')),
    reason      text NOT NULL CHECK (reason IN ('paused', 'in_flight_full', 'window_exhausted')),
    count       bigint NOT NULL CHECK (count > 0),
    PRIMARY KEY (endpoint_id, queue, hour, reason)
);
-- Retention prunes counts of hours older than its age, oldest first
-- (store/retention.rs). A count gets one entry when its hour's first refusal inserts
-- it; the refusals after that only change `count`, which no index holds.
CREATE INDEX queue_deferrals_hour_idx ON queue_deferrals (hour);
