-- Each table on the claim → complete path keeps every rule its CHECK constraints held,
-- in one constraint that calls one function (issue 14, less database work per cycle).
--
-- Why: PostgreSQL reads every CHECK constraint of a table back from its stored text
-- (`stringToNode`) and plans it again (`expression_planner`) on every execution of every
-- statement that writes the table; nothing keeps the prepared form between executions.
-- `todos` had 13 such constraints and `todo_attempts` 6, so one cycle (two updates of
-- `todos`, an insert and an update of `todo_attempts`) parsed and planned 38 expression
-- trees. A call of a PL/pgSQL function is one small tree to read; the function's own
-- expression is prepared once per connection. Measured with the cycle probe's product
-- statements (16 clients, machine-wide CPU per cycle, three rounds): 1 275 µs with the
-- 19 constraints, 1 158 µs with these two, 1 067 µs with none.
--
-- The rules are the old constraints' own, each written `(…) IS NOT FALSE` so that, as
-- in a CHECK constraint, an unknown (NULL) answer passes. A row that breaks one is
-- refused with SQLSTATE 23514 (check_violation) naming `todos_valid` /
-- `todo_attempts_valid`.
--
-- The new constraints are added NOT VALID: the rows already met the same rules under
-- the constraints dropped in this same transaction, and a validating read here would
-- hold the table's exclusive lock (every claim waiting) for the whole scan. The next
-- migration validates them under a lock that lets writes go on.
SET LOCAL lock_timeout = '5s';

CREATE OR REPLACE FUNCTION switchboard_todo_row_valid(
    state text, attempt integer, max_attempts integer, attempts_total integer,
    lease_expires_at timestamptz, interrupt_expires_at timestamptz, interrupt_wait_seconds integer,
    next_retry_at timestamptz, dead_reason text, dead_lettered_at timestamptz,
    quarantine_reason text, work_order text)
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
       AND (next_retry_at IS NULL OR state = 'failed') IS NOT FALSE;
END $$;

CREATE OR REPLACE FUNCTION switchboard_attempt_row_valid(
    seq integer, ended_at timestamptz, outcome text, disposition text, summary text, artifact text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (seq >= 1) IS NOT FALSE
       AND (outcome IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'interrupt_expired',
                        'canceled', 'revoked')) IS NOT FALSE
       AND (disposition IN ('done', 'retry_scheduled', 'requeued', 'dead_lettered', 'canceled')) IS NOT FALSE
       AND (octet_length(summary) <= 2048) IS NOT FALSE
       AND (octet_length(artifact) <= 512) IS NOT FALSE
       -- Closed is all three of when, how and to what effect; open is none of them.
       AND (num_nulls(ended_at, outcome, disposition) IN (0, 3)) IS NOT FALSE;
END $$;

ALTER TABLE todos
    ADD CONSTRAINT todos_valid CHECK (switchboard_todo_row_valid(state, attempt, max_attempts, attempts_total,
        lease_expires_at, interrupt_expires_at, interrupt_wait_seconds, next_retry_at, dead_reason,
        dead_lettered_at, quarantine_reason, work_order)) NOT VALID,
    DROP CONSTRAINT todos_state_check,
    DROP CONSTRAINT todos_attempt_check,
    DROP CONSTRAINT todos_max_attempts_check,
    DROP CONSTRAINT todos_attempts_total_check,
    DROP CONSTRAINT todos_interrupt_wait_seconds_check,
    DROP CONSTRAINT todos_dead_reason_check,
    DROP CONSTRAINT todos_quarantine_reason_check,
    DROP CONSTRAINT todos_work_order_check,
    DROP CONSTRAINT todos_check,
    DROP CONSTRAINT todos_check1,
    DROP CONSTRAINT todos_check2,
    DROP CONSTRAINT todos_check3,
    DROP CONSTRAINT todos_check4;

ALTER TABLE todo_attempts
    ADD CONSTRAINT todo_attempts_valid CHECK (switchboard_attempt_row_valid(seq, ended_at, outcome, disposition,
        summary, artifact)) NOT VALID,
    DROP CONSTRAINT todo_attempts_seq_check,
    DROP CONSTRAINT todo_attempts_outcome_check,
    DROP CONSTRAINT todo_attempts_disposition_check,
    DROP CONSTRAINT todo_attempts_summary_check,
    DROP CONSTRAINT todo_attempts_artifact_check,
    DROP CONSTRAINT todo_attempts_check;
