-- The ceiling's two statements on the product's table (its columns, indexes, CHECK
-- constraints and triggers): what the table costs beside what the statements do.
UPDATE todos SET state = 'claimed', lease_expires_at = now() + interval '30 seconds', attempt = attempt + 1
 WHERE id = (SELECT id FROM todos WHERE endpoint_id = :ep::uuid AND queue = 'work' AND state = 'pending'
              ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id AS cid \gset
UPDATE todos SET state = 'done', lease_expires_at = NULL WHERE id = :cid::uuid AND state = 'claimed';
