ALTER TABLE todos DROP COLUMN quarantine_reason;
DROP INDEX events_delivery_dedup;
ALTER TABLE events DROP COLUMN webhook_id;
DROP TABLE webhooks;
