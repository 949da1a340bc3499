CREATE OR REPLACE FUNCTION public.switchboard_outbox_quarantined()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    held_webhook uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    SELECT e.webhook_id INTO held_webhook FROM events e WHERE e.id = NEW.event_id;
    INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt)
    SELECT DISTINCT ON (k.id) k.id, NEW.scope_id, 'delivery.quarantined', 'normal',
           'quarantine:' || COALESCE(held_webhook::text, 'none') || ':'
             || extract(epoch FROM date_bin('10 minutes', now(), timestamptz 'epoch'))::bigint,
           NEW.id, NEW.endpoint_id, s.include_excerpt
    FROM sinks k
    JOIN sink_subscriptions s ON s.sink_id = k.id
    WHERE k.scope_id = NEW.scope_id AND k.enabled
      AND 'delivery.quarantined' = ANY (s.events)
      AND s.min_severity IN ('low', 'normal')
      AND (cardinality(s.queues) = 0 OR 'quarantine' = ANY (s.queues))
      AND (cardinality(s.endpoint_ids) = 0 OR NEW.endpoint_id = ANY (s.endpoint_ids))
      AND (cardinality(s.webhook_ids) = 0 OR held_webhook = ANY (s.webhook_ids))
    ORDER BY k.id, s.include_excerpt DESC
    ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held')
    DO UPDATE SET count = outbox.count + 1;
    RETURN NULL;
END $function$
