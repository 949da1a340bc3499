-- The bare-SQL ceiling's table (../shared/bench/pgbench/todos_schema.sql), in a schema of its own.
CREATE SCHEMA IF NOT EXISTS ceiling;
SET search_path = ceiling;
-- Fresh `todos` table prefilled with :rows pending rows (psql -v rows=N).
DROP TABLE IF EXISTS todos;
CREATE TABLE todos (
    id               bigserial PRIMARY KEY,
    queue            text        NOT NULL,
    status           text        NOT NULL,
    lease_expires_at timestamptz,
    attempts         int         NOT NULL DEFAULT 0,
    payload          jsonb       NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
-- Claim path: oldest pending row of a queue (FIFO by created_at, id).
-- NB: with ORDER BY id and an index on (queue, id), a single-queue table makes
-- the planner walk the primary key and filter status, i.e. scan every row
-- already done; ordering by created_at keeps the claim on this index.
CREATE INDEX todos_claim_idx ON todos (queue, created_at, id) WHERE status = 'pending';

INSERT INTO todos (queue, status, payload)
SELECT 'default', 'pending',
       jsonb_build_object('seq', g, 'kind', 'bench', 'body', repeat('x', 200))
FROM generate_series(1, :rows) AS g;

VACUUM (ANALYZE) todos;
