-- An attempt's history row is written once, when the attempt closes (issue 14, less
-- database work per cycle). While it is open the todo row holds it: `attempts_total` is
-- its number, `claimed_at` its start, the lease (or the interrupt lease) its lease, and
-- these three columns its claimant, relay flag and latest heartbeat. The statement that
-- closes it (complete, fail, release, a reaper, a revocation) inserts the history row
-- from the todo row as it was (store/todos/attempt_close.rs); readers show the open
-- attempt from the todo row (TodoRow::open_attempt).
--
-- Before, a claim inserted an open row (its primary key, the open-attempt exclusion
-- index, a foreign-key check on the todo) and every heartbeat, interrupt, resume and
-- close updated it again. Measured with the cycle probe's statements (16 clients,
-- machine-wide CPU per claim → complete cycle, three rounds): 1 386 / 1 456 / 1 439 µs
-- with the open row, 1 175 / 1 292 / 1 305 µs with the row written at close.
--
-- Attempts open now keep their rows; an earlier release still running beside this one
-- may open more. A close finds such a row and closes it in place (ON CONFLICT), so the
-- exclusion constraint on open rows stays for them. Their claimant, relay flag and
-- heartbeat are copied onto their todos here so that this release shows them too.
SET LOCAL lock_timeout = '5s';

ALTER TABLE todos
    ADD COLUMN attempt_claimant text,
    ADD COLUMN attempt_relay boolean NOT NULL DEFAULT false,
    ADD COLUMN attempt_heartbeat_at timestamptz;

UPDATE todos t SET attempt_claimant = a.claimant, attempt_relay = a.relay, attempt_heartbeat_at = a.last_heartbeat_at
FROM todo_attempts a
WHERE a.todo_id = t.id AND a.ended_at IS NULL AND a.seq = t.attempts_total;
