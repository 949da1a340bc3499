-- A sketch of a narrow hot table (issue 14's open question, not the product's schema):
-- the live part of each pending todo of the probe's queue in `narrow.live` (keys, state,
-- lease, attempt count; two indexes), the wide `todos` row untouched until the todo ends.
-- Rebuilt from the pending todos before every window of the narrow variants.
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS narrow;
DROP TABLE IF EXISTS narrow.live;
CREATE TABLE narrow.live (
    id               uuid PRIMARY KEY,
    endpoint_id      uuid        NOT NULL,
    queue            text        NOT NULL,
    state            text        NOT NULL CHECK (state IN ('pending', 'claimed')),
    created_at       timestamptz NOT NULL,
    lease_expires_at timestamptz,
    lease_token_hash bytea,
    attempts_total   int         NOT NULL
);
INSERT INTO narrow.live (id, endpoint_id, queue, state, created_at, attempts_total)
SELECT id, endpoint_id, queue, 'pending', created_at, attempts_total FROM todos WHERE state = 'pending';
CREATE INDEX live_claim_idx ON narrow.live (endpoint_id, queue, created_at, id) WHERE state = 'pending';
CREATE INDEX live_lease_idx ON narrow.live (lease_expires_at) WHERE state = 'claimed';
VACUUM (ANALYZE) narrow.live;
