ALTER TABLE notify_hooks DROP COLUMN created_by_agent;
ALTER TABLE sinks DROP COLUMN changed_by_agent;
ALTER TABLE webhooks DROP COLUMN secret_fingerprint_keyed;
ALTER TABLE connections DROP COLUMN fingerprint_keyed;
ALTER TABLE connections DROP COLUMN bound;
