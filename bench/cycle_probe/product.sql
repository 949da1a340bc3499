-- The product's claim-next → complete cycle: two statements, each its own transaction.
-- Copied from the product's statements (store/todos/claim.rs with claim_parts.rs, and
-- store/todos/finish.rs with attempt_close.rs) with the parameters written in; `:ep` is
-- the endpoint's id. Since `completed_attempt_on_the_row` the complete keeps the attempt
-- it closes on the todo row; since `attempt_on_row_marker` a claim marks the attempt it
-- opens, and the complete of a marked attempt is one update of `todos` (an attempt an
-- earlier release opened as a history row is closed in place by a second statement; none
-- here). Since the claim-next became one UPDATE with a subquery (no CTEs), the budget probe
-- is a NOT EXISTS in the candidate search.
-- The integration test `statements` (tests/it/statements.rs) holds these two to the
-- registered statements store::todos::claim::NEXT_ON_QUEUE and
-- store::todos::finish::COMPLETE_OPENED_ON_ROW, word for word once the values are
-- written in (and the claim returns only what `\gset` needs): change those, change this.
-- The probe compares variants of them with each other and with the ceiling; what the
-- product itself does over REST is measured by `scripts/bench --only-throughput`.
UPDATE todos t SET state = 'claimed', attempt = t.attempt + 1, attempts_total = t.attempts_total + 1, claimed_by = t.endpoint_id, lease_expires_at = now() + 300 * interval '1 second', lease_token_hash = '\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea, claimed_at = now(), updated_at = now(), next_retry_at = NULL, attempt_claimant = NULL, attempt_relay = false, attempt_heartbeat_at = NULL, attempt_on_row = t.attempts_total + 1 WHERE t.id = (SELECT id FROM todos WHERE endpoint_id = :ep::uuid AND state = 'pending' AND queue = 'work' AND NOT EXISTS (SELECT 1 FROM queue_admission a WHERE a.endpoint_id = :ep::uuid AND a.queue = 'work') ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING t.id AS cid, t.payload AS cpayload
\gset
UPDATE todos t SET state = 'done', result = NULL, completed_at = now(), updated_at = now(), lease_expires_at = NULL, lease_token_hash = NULL, attempt_ended_at = now(), attempt_lease_expires_at = t.lease_expires_at, attempt_summary = NULL, attempt_summary_truncated = false, attempt_artifact = NULL WHERE t.id = :cid::uuid AND t.endpoint_id = :ep::uuid AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE "C" AND ('\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea IS NULL OR t.lease_token_hash = '\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea) AND t.attempt_on_row = t.attempts_total RETURNING t.*;
