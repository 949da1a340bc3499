-- Retention prunes terminal todos (done, canceled, dead letters) whose last change is
-- past the retention age, oldest first, in batches of 500. This partial index holds
-- only those rows, so each batch reads its candidates from the front of the index
-- instead of scanning a table that is mostly old done rows. Its predicate is the
-- store's (store/retention.rs) word for word, so the planner can use it. A row enters
-- it only when it becomes terminal: claims and heartbeats never write to it.
--
-- Built CONCURRENTLY (this migration runs outside a transaction, metadata.toml) so
-- that instances of the previous version keep writing todos while it builds.
--
-- Events need no index of their own: retention walks them per owner scope on
-- events_scope_received_idx, and an extra index on every delivery would cost intake.
CREATE INDEX CONCURRENTLY IF NOT EXISTS todos_retention_idx ON todos (updated_at)
    WHERE state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL);
