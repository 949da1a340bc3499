-- The digest's "deliveries quarantined" section (store/digests/sections.rs, QUARANTINED)
-- counts one owner's quarantined deliveries since the previous digest. On
-- events_scope_received_idx it had to read every delivery of the owner in that window
-- and drop all but the quarantined few (the digest benchmark: 13 000 deliveries read
-- for 28 counted at 1 000 000 todos). This partial index holds only quarantined
-- deliveries, so the section reads what it counts. Its predicate is the query's, word
-- for word, so the planner can use it. Intake pays only for the deliveries it holds
-- (a routed or dropped delivery is never written to it).
--
-- Built CONCURRENTLY (this migration runs outside a transaction, metadata.toml) so
-- that instances of the previous version keep recording deliveries while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_quarantined_idx ON events (scope_id, received_at)
    WHERE disposition = 'quarantined';
