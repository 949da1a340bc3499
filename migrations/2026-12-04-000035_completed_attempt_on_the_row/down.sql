-- Back to a history row for every closed attempt: each attempt a completed todo holds
-- gets its row, then the columns go.
SET LOCAL lock_timeout = '5s';
-- No completion may commit between the copy below and the columns' removal: it would
-- keep its attempt only in a column about to go.
LOCK TABLE todos IN SHARE ROW EXCLUSIVE MODE;

DROP VIEW IF EXISTS todo_attempt_history;

INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, last_heartbeat_at,
                           lease_expires_at, ended_at, outcome, disposition, summary, summary_truncated, artifact)
SELECT t.id, t.attempts_total, t.endpoint_id, t.attempt_claimant, t.attempt_relay, t.claimed_at,
       t.attempt_heartbeat_at, t.attempt_lease_expires_at, t.attempt_ended_at, 'completed', 'done',
       t.attempt_summary, t.attempt_summary_truncated, t.attempt_artifact
FROM todos t
WHERE t.attempt_ended_at IS NOT NULL
ON CONFLICT (todo_id, seq) DO NOTHING;

ALTER TABLE todos DROP CONSTRAINT IF EXISTS todos_valid_2;
ALTER TABLE todos
    DROP COLUMN attempt_ended_at,
    DROP COLUMN attempt_lease_expires_at,
    DROP COLUMN attempt_summary,
    DROP COLUMN attempt_summary_truncated,
    DROP COLUMN attempt_artifact;
ALTER TABLE todos
    ADD CONSTRAINT todos_valid CHECK (switchboard_todo_row_valid(state, attempt, max_attempts, attempts_total,
        lease_expires_at, interrupt_expires_at, interrupt_wait_seconds, next_retry_at, dead_reason,
        dead_lettered_at, quarantine_reason, work_order)) NOT VALID;
ALTER TABLE todos VALIDATE CONSTRAINT todos_valid;
DROP FUNCTION IF EXISTS switchboard_todo_row_valid_2;
