-- The bare-SQL ceiling's cycle (../shared/bench/pgbench/claim_complete_2tx.sql): two
-- autocommitted statements on the bare table.
UPDATE ceiling.todos
   SET status = 'running', lease_expires_at = now() + interval '30 seconds', attempts = attempts + 1
 WHERE id = (SELECT id FROM ceiling.todos WHERE queue = 'default' AND status = 'pending'
              ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id AS claimed_id \gset
UPDATE ceiling.todos SET status = 'done', lease_expires_at = NULL WHERE id = :claimed_id AND status = 'running';
