SET LOCAL lock_timeout = '5s';

ALTER TABLE todos
    DROP CONSTRAINT todos_valid,
    ADD CONSTRAINT todos_state_check CHECK (state IN ('pending', 'claimed', 'input_required', 'auth_required', 'done', 'failed', 'canceled')),
    ADD CONSTRAINT todos_attempt_check CHECK (attempt >= 0),
    ADD CONSTRAINT todos_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 100),
    ADD CONSTRAINT todos_attempts_total_check CHECK (attempts_total >= 0),
    ADD CONSTRAINT todos_interrupt_wait_seconds_check CHECK (interrupt_wait_seconds BETWEEN 1 AND 604800),
    ADD CONSTRAINT todos_dead_reason_check CHECK (dead_reason IN ('attempts_exhausted', 'lease_expired', 'interrupt_expired', 'endpoint_revoked')),
    ADD CONSTRAINT todos_quarantine_reason_check CHECK (quarantine_reason IN ('untrusted_actor', 'rule_fault', 'rule_action')),
    ADD CONSTRAINT todos_work_order_check CHECK (octet_length(work_order) <= 4096),
    ADD CONSTRAINT todos_check CHECK ((state = 'failed' AND next_retry_at IS NULL) = (dead_reason IS NOT NULL AND dead_lettered_at IS NOT NULL)),
    ADD CONSTRAINT todos_check1 CHECK ((state = 'claimed') = (lease_expires_at IS NOT NULL)),
    ADD CONSTRAINT todos_check2 CHECK ((state IN ('input_required', 'auth_required')) = (interrupt_expires_at IS NOT NULL)),
    ADD CONSTRAINT todos_check3 CHECK ((interrupt_expires_at IS NULL) = (interrupt_wait_seconds IS NULL)),
    ADD CONSTRAINT todos_check4 CHECK (next_retry_at IS NULL OR state = 'failed');

ALTER TABLE todo_attempts
    DROP CONSTRAINT todo_attempts_valid,
    ADD CONSTRAINT todo_attempts_seq_check CHECK (seq >= 1),
    ADD CONSTRAINT todo_attempts_outcome_check CHECK (outcome IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'interrupt_expired', 'canceled', 'revoked')),
    ADD CONSTRAINT todo_attempts_disposition_check CHECK (disposition IN ('done', 'retry_scheduled', 'requeued', 'dead_lettered', 'canceled')),
    ADD CONSTRAINT todo_attempts_summary_check CHECK (octet_length(summary) <= 2048),
    ADD CONSTRAINT todo_attempts_artifact_check CHECK (octet_length(artifact) <= 512),
    ADD CONSTRAINT todo_attempts_check CHECK (num_nulls(ended_at, outcome, disposition) IN (0, 3));

DROP FUNCTION switchboard_todo_row_valid(text, integer, integer, integer, timestamptz, timestamptz, integer,
    timestamptz, text, timestamptz, text, text);
DROP FUNCTION switchboard_attempt_row_valid(integer, timestamptz, text, text, text, text);
