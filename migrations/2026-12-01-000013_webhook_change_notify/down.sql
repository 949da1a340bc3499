DROP TRIGGER IF EXISTS webhooks_changed_truncate ON webhooks;
DROP TRIGGER IF EXISTS webhooks_changed_delete ON webhooks;
DROP TRIGGER IF EXISTS webhooks_changed_update ON webhooks;
DROP FUNCTION IF EXISTS switchboard_webhook_changed();
