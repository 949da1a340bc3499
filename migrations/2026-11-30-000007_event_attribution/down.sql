UPDATE events SET webhook_id = NULL WHERE webhook_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = events.webhook_id);
UPDATE events SET endpoint_id = NULL WHERE endpoint_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = events.endpoint_id);
ALTER TABLE events ADD CONSTRAINT events_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE SET NULL;
ALTER TABLE events ADD CONSTRAINT events_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE SET NULL;
