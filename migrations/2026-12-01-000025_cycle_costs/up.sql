-- A claim no longer checks two foreign keys that can never fail (issue 14, less
-- database work per claim → complete cycle).
--
-- `todos.claimed_by` and `todo_attempts.claimer_endpoint_id` always name the todo's own
-- endpoint: every claim sets them from `todos.endpoint_id` (store/todos/claim_parts.rs),
-- and nothing else writes them but NULL. That endpoint's key on the todo
-- (`todos.endpoint_id`, ON DELETE CASCADE, attempts going with their todo) already
-- removes both rows if the endpoint goes, so their own keys' ON DELETE SET NULL never had
-- a row to act on (endpoints are revoked, not deleted).
--
-- What the keys cost: each claim ran both checks, two lookups that lock the endpoint row
-- FOR KEY SHARE. With many agents of one endpoint claiming at once, every such lock on
-- the one row adds a new MultiXact (the row's lockers so far plus this one), written to
-- the WAL and the MultiXact SLRU, on the claim's commit path: the cost the outbox's
-- foreign keys had on dead letters (migration `outbox_costs`).
--
-- Dropping a key locks todos and todo_attempts (ACCESS EXCLUSIVE) and endpoints briefly:
-- give up rather than queue every claim behind a long transaction.
SET LOCAL lock_timeout = '5s';
ALTER TABLE todos DROP CONSTRAINT IF EXISTS todos_claimed_by_fkey;
ALTER TABLE todo_attempts DROP CONSTRAINT IF EXISTS todo_attempts_claimer_endpoint_id_fkey;
