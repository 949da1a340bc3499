-- The product's cycle without attempt history and without the admission budget probe.
-- Copied from the product's statements (store/todos/claim.rs with claim_parts.rs, and
-- store/todos/finish.rs) with the parameters written in; `:ep` is the endpoint's id.
-- The probe compares variants of them with each other and with the ceiling; what the
-- product itself does over REST is measured by `scripts/bench --only-throughput`.
UPDATE todos t SET state = 'claimed', attempt = t.attempt + 1, attempts_total = t.attempts_total + 1, claimed_by = t.endpoint_id, lease_expires_at = now() + 300 * interval '1 second', lease_token_hash = '\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea, claimed_at = now(), updated_at = now(), next_retry_at = NULL WHERE t.id = (SELECT id FROM todos WHERE endpoint_id = :ep::uuid AND state = 'pending' AND queue = 'work' ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING t.id AS cid, t.payload AS cpayload
\gset
WITH done AS (UPDATE todos t SET state = 'done', result = NULL, completed_at = now(), updated_at = now(), lease_expires_at = NULL, lease_token_hash = NULL WHERE t.id = :cid::uuid AND t.endpoint_id = :ep::uuid AND t.queue <> 'quarantine' AND t.state = 'claimed' AND ('\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea IS NULL OR t.lease_token_hash = '\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea) RETURNING t.*) SELECT * FROM done;
