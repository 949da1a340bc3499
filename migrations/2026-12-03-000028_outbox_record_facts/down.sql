DROP FUNCTION IF EXISTS switchboard_claim_outbox_messages(integer, integer);
-- The trigger of migration `outbox_fanout` comes back (records without facts).
CREATE OR REPLACE FUNCTION switchboard_outbox_dead_letter() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    INSERT INTO outbox_events (scope_id, todo_id, endpoint_id, queue, event_id, dead_letter_count)
    VALUES (NEW.scope_id, NEW.id, NEW.endpoint_id, NEW.queue, NEW.event_id, NEW.dead_letter_count)
    RETURNING id INTO recorded;
    IF EXISTS (SELECT 1 FROM outbox_events WHERE id < recorded ORDER BY id DESC LIMIT 1)
       OR EXISTS (SELECT 1 FROM outbox_events WHERE id > recorded) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM outbox o WHERE o.status = 'pending' AND o.next_attempt_at <= now()
                 AND (o.claimed_until IS NULL OR o.claimed_until < now())) THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('switchboard_outbox', '');
    RETURN NULL;
END $$;
ALTER TABLE outbox_events
    DROP COLUMN IF EXISTS title, DROP COLUMN IF EXISTS dead_reason, DROP COLUMN IF EXISTS attempt,
    DROP COLUMN IF EXISTS max_attempts, DROP COLUMN IF EXISTS source, DROP COLUMN IF EXISTS webhook_id,
    DROP COLUMN IF EXISTS summary, DROP COLUMN IF EXISTS artifact, DROP COLUMN IF EXISTS relay,
    DROP COLUMN IF EXISTS reclaimed;
