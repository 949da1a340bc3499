-- A dead letter's record is written once, updated once by the claim that takes it
-- (its lease), and deleted with its sinks' rows. Half of each page is left free so
-- that the claim's new row version fits beside the old one: a heap-only update, which
-- adds no entry to the primary key (the table's only index) and is pruned in place.
-- On a full page every claimed record moved to another page and took an index entry
-- of its own, which the claim's next scan of the key walks past. Records live for
-- milliseconds to seconds, so the table stays small; pages written before this
-- migration keep their old packing.
SET LOCAL lock_timeout = '5s';

ALTER TABLE outbox_events SET (fillfactor = 50);
