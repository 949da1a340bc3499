-- notify_owner's rate (SPEC section 5: 5 an hour per endpoint), counted in the
-- database so that it holds across instances: one row per accepted call, in the
-- transaction that queues its outbox rows (a refused or rolled-back call leaves none).
-- Rows older than the hour are pruned by the next call of the same endpoint, so an
-- endpoint holds at most five. Additive: a new table, nothing else changes.
SET LOCAL lock_timeout = '5s';

CREATE TABLE agent_notify_calls (
    id          uuid PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    -- How many outbox rows (sinks) the call queued.
    enqueued    integer NOT NULL CHECK (enqueued >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_notify_calls_endpoint_idx ON agent_notify_calls (endpoint_id, created_at);
