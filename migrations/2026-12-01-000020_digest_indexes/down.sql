DROP INDEX IF EXISTS events_quarantined_idx;
