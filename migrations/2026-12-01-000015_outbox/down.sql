DROP TRIGGER IF EXISTS outbox_queued ON outbox;
DROP FUNCTION IF EXISTS switchboard_outbox_queued();
DROP TRIGGER IF EXISTS todos_quarantined_outbox ON todos;
DROP FUNCTION IF EXISTS switchboard_outbox_quarantined();
DROP TRIGGER IF EXISTS todos_dead_letter_outbox ON todos;
DROP FUNCTION IF EXISTS switchboard_outbox_dead_letter();
DROP INDEX IF EXISTS sinks_scope_idx;
DROP TABLE IF EXISTS outbox;
