CREATE OR REPLACE FUNCTION public.switchboard_outbox_dead_letter()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    recorded bigint;
    closing record;
    from_webhook uuid;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    -- One walk of the todo's attempts: the closing one's summary and artifact, and
    -- whether any was a relay's.
    SELECT (array_agg(a.summary ORDER BY a.seq DESC))[1] AS summary,
           (array_agg(a.artifact ORDER BY a.seq DESC))[1] AS artifact,
           coalesce(bool_or(a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'), false) AS relay
    INTO closing
    FROM todo_attempts a WHERE a.todo_id = NEW.id;
    IF NEW.event_id IS NOT NULL THEN
        SELECT e.webhook_id INTO from_webhook FROM events e WHERE e.id = NEW.event_id;
    END IF;
    INSERT INTO outbox_events (scope_id, todo_id, endpoint_id, queue, event_id, dead_letter_count, title, dead_reason,
                               attempt, max_attempts, source, webhook_id, summary, artifact, relay)
    VALUES (NEW.scope_id, NEW.id, NEW.endpoint_id, NEW.queue, NEW.event_id, NEW.dead_letter_count, NEW.title,
            NEW.dead_reason, NEW.attempt, NEW.max_attempts, NEW.source, from_webhook, closing.summary,
            closing.artifact, closing.relay)
    RETURNING id INTO recorded;
    -- From the newest record down (and anything newer): the oldest records are the
    -- ones fan-out deleted, whose dead index entries a forward scan would walk first.
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
END $function$
