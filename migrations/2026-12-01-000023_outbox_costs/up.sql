-- Outbox rows keep their sink's and scope's ids without foreign keys to them.
--
-- Why: a foreign-key check locks the referenced row FOR KEY SHARE. Every dead letter of
-- one owner inserts outbox rows naming the same few sink rows and the same scope row,
-- and when several such transactions are open at once each new lock on that one row
-- makes a new MultiXact (the row's lockers so far, plus this one), written to the WAL
-- and to the MultiXact SLRU, on the dead letter's own commit path. The outbox benchmark
-- measured the dead-letter transaction at 54 % of its rate with no sink once five sinks
-- were subscribed.
--
-- What the keys did is done otherwise:
-- - a deleted sink (ON DELETE SET NULL): its rows keep the id; the worker finds no sink
--   to dial and ends them `undeliverable` (`sink_gone`), held rows included; the
--   delivery record stays, and the Board names the sink as deleted (no row to join);
-- - a deleted scope (ON DELETE CASCADE): nothing deletes scopes; retention prunes ended
--   rows whatever their scope.
-- Dropping the keys locks outbox (ACCESS EXCLUSIVE), sinks and owner_scopes briefly:
-- give up rather than queue every write behind a long transaction.
SET LOCAL lock_timeout = '5s';
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_sink_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_scope_id_fkey;
-- Held rows of sinks deleted under the old key (their sink_id set to NULL) could never
-- be sent and stayed open: they end as the worker now ends a deleted sink's rows.
UPDATE outbox SET status = 'undeliverable', claimed_until = NULL, last_error = 'sink_gone'
WHERE sink_id IS NULL AND status = 'held';

-- Room on every page for each row's claim to write its new version beside the old one
-- (a HOT update: `claimed_until` and `attempts` are in no index). On full pages a claim
-- moved the row to another page and wrote a new entry into each of its five indexes:
-- 27 µs a row against 8 µs with room (256 rows claimed at once, EXPLAIN ANALYZE). New
-- pages are filled to half; the rows are short-lived (retention prunes ended ones).
ALTER TABLE outbox SET (fillfactor = 50);

-- The worker's claim as one function with a cached plan that always walks the due index
-- in `next_attempt_at` order and stops after `batch` rows. Left to the planner, a table
-- without fresh statistics (autovacuum off, or a backlog that grew since the last
-- ANALYZE) got a bitmap scan of every due row and a sort: 11 ms against 0.3 ms to find
-- 256 rows of a 20 000-row backlog.
CREATE FUNCTION switchboard_claim_outbox(claim_seconds integer, batch integer, busy uuid[])
RETURNS SETOF outbox LANGUAGE plpgsql
SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
BEGIN
    RETURN QUERY
    UPDATE outbox SET claimed_until = now() + make_interval(secs => claim_seconds), attempts = attempts + 1
    WHERE id = ANY (ARRAY(
        SELECT o.id FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND (o.sink_id IS NULL OR o.sink_id <> ALL (busy))
        ORDER BY o.next_attempt_at LIMIT batch FOR UPDATE SKIP LOCKED))
    RETURNING outbox.*;
END $$;
