-- Back to open attempts stored as rows: every attempt open on a todo row gets its row.
SET LOCAL lock_timeout = '5s';
-- No claim may commit between the copy below and the columns' removal: it would keep
-- its open attempt only in a column about to go.
LOCK TABLE todos IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, last_heartbeat_at,
                           lease_expires_at)
SELECT t.id, t.attempts_total, t.endpoint_id, t.attempt_claimant, t.attempt_relay, t.claimed_at,
       t.attempt_heartbeat_at, COALESCE(t.lease_expires_at, t.interrupt_expires_at)
FROM todos t
WHERE t.state IN ('claimed', 'input_required', 'auth_required')
ON CONFLICT (todo_id, seq) DO NOTHING;

ALTER TABLE todos
    DROP COLUMN attempt_claimant,
    DROP COLUMN attempt_relay,
    DROP COLUMN attempt_heartbeat_at;
