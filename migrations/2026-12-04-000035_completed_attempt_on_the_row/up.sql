-- A completed todo keeps its last attempt on its own row (issue 14, less database work
-- per cycle). Since `attempt_written_at_close` a claim → complete cycle wrote the todo
-- twice and inserted one history row at the end: its heap tuple, its primary-key entry,
-- the foreign-key check against the todo and the row's CHECK function. A completion is
-- final (only a failed todo is ever retried), so the attempt it closes is the last one
-- the todo will have; the completing update now writes that attempt's facts onto the
-- todo row it is already writing, and inserts nothing:
--
--   `claimed_at`, `attempt_claimant`, `attempt_relay`, `attempt_heartbeat_at` (already
--   there for the open attempt), `attempts_total` (its number), and the four below: when
--   it ended, its lease at the end, the agent's summary (and whether it was cut) and
--   artifact. Its outcome is `completed` and its disposition `done`, as for every
--   completion.
--
-- Every other close (fail, release, a reaper, a revocation) still writes a history row:
-- those attempts are followed by others, which take the row's attempt columns.
--
-- `todo_attempt_history` is the whole history: the stored rows, and the attempt a
-- completed todo holds, unless a stored row has the same number (an attempt an earlier
-- release opened as a row, which the completion closes in place).
--
-- Measured with the cycle probe's statements (16 clients, machine-wide busy CPU per claim
-- → complete cycle, three rounds, Dec 4): 784 / 943 / 802 µs with the history row
-- inserted at completion, 788 / 702 / 697 µs with the attempt kept on the row.
--
-- The row's rules move to a new function that also checks the new columns; its
-- constraint is added NOT VALID here (the rows already met every old rule and the new
-- columns are empty) and validated by the next migration under a lock that lets writes
-- go on.
SET LOCAL lock_timeout = '5s';

ALTER TABLE todos
    ADD COLUMN attempt_ended_at timestamptz,
    ADD COLUMN attempt_lease_expires_at timestamptz,
    ADD COLUMN attempt_summary text,
    ADD COLUMN attempt_summary_truncated boolean NOT NULL DEFAULT false,
    ADD COLUMN attempt_artifact text;

-- The rules of `switchboard_todo_row_valid` and four more. A CHECK passes a NULL answer,
-- so a rule on a column that is null passes, as it would in a constraint of its own.
CREATE OR REPLACE FUNCTION switchboard_todo_row_valid_2(
    state text, attempt integer, max_attempts integer, attempts_total integer,
    lease_expires_at timestamptz, interrupt_expires_at timestamptz, interrupt_wait_seconds integer,
    next_retry_at timestamptz, dead_reason text, dead_lettered_at timestamptz,
    quarantine_reason text, work_order text, attempt_ended_at timestamptz,
    attempt_lease_expires_at timestamptz, attempt_summary text, attempt_artifact text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (state IN ('pending', 'claimed', 'input_required', 'auth_required', 'done', 'failed', 'canceled')) IS NOT FALSE
       AND (attempt >= 0) IS NOT FALSE
       AND (max_attempts BETWEEN 1 AND 100) IS NOT FALSE
       AND (attempts_total >= 0) IS NOT FALSE
       AND (interrupt_wait_seconds BETWEEN 1 AND 604800) IS NOT FALSE
       AND (dead_reason IN ('attempts_exhausted', 'lease_expired', 'interrupt_expired', 'endpoint_revoked')) IS NOT FALSE
       AND (quarantine_reason IN ('untrusted_actor', 'rule_fault', 'rule_action')) IS NOT FALSE
       AND (octet_length(work_order) <= 4096) IS NOT FALSE
       -- A dead letter is failed with no retry scheduled; it always knows why and when.
       AND ((state = 'failed' AND next_retry_at IS NULL) = (dead_reason IS NOT NULL AND dead_lettered_at IS NOT NULL)) IS NOT FALSE
       AND ((state = 'claimed') = (lease_expires_at IS NOT NULL)) IS NOT FALSE
       AND ((state IN ('input_required', 'auth_required')) = (interrupt_expires_at IS NOT NULL)) IS NOT FALSE
       AND ((interrupt_expires_at IS NULL) = (interrupt_wait_seconds IS NULL)) IS NOT FALSE
       AND (next_retry_at IS NULL OR state = 'failed') IS NOT FALSE
       -- Only a completed todo holds a closed attempt, and it ended with a lease.
       AND (attempt_ended_at IS NULL OR state = 'done') IS NOT FALSE
       AND ((attempt_ended_at IS NULL) = (attempt_lease_expires_at IS NULL)) IS NOT FALSE
       AND (octet_length(attempt_summary) <= 2048) IS NOT FALSE
       AND (octet_length(attempt_artifact) <= 512) IS NOT FALSE;
END $$;

ALTER TABLE todos
    ADD CONSTRAINT todos_valid_2 CHECK (switchboard_todo_row_valid_2(state, attempt, max_attempts, attempts_total,
        lease_expires_at, interrupt_expires_at, interrupt_wait_seconds, next_retry_at, dead_reason,
        dead_lettered_at, quarantine_reason, work_order, attempt_ended_at, attempt_lease_expires_at,
        attempt_summary, attempt_artifact)) NOT VALID,
    DROP CONSTRAINT todos_valid;

CREATE VIEW todo_attempt_history AS
    SELECT a.todo_id, a.seq, a.claimer_endpoint_id, a.claimant, a.relay, a.claimed_at, a.last_heartbeat_at,
           a.lease_expires_at, a.ended_at, a.outcome, a.disposition, a.summary, a.summary_truncated, a.artifact
    FROM todo_attempts a
    UNION ALL
    SELECT t.id, t.attempts_total, t.endpoint_id, t.attempt_claimant, t.attempt_relay, t.claimed_at,
           t.attempt_heartbeat_at, t.attempt_lease_expires_at, t.attempt_ended_at, 'completed'::text, 'done'::text,
           t.attempt_summary, t.attempt_summary_truncated, t.attempt_artifact
    FROM todos t
    WHERE t.attempt_ended_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM todo_attempts s WHERE s.todo_id = t.id AND s.seq = t.attempts_total);
