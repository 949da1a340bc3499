-- What waits for fan-out becomes outbox rows first, so nothing recorded is lost.
DO $$ BEGIN
    WHILE switchboard_fan_out_outbox(10000) > 0 LOOP
    END LOOP;
END $$;
DROP FUNCTION IF EXISTS switchboard_fan_out_outbox(integer);
CREATE OR REPLACE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queued) AND NOT EXISTS (
        SELECT 1 FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = o.id)) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION switchboard_outbox_dead_letter() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    raised_event text;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    raised_event := CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = NEW.id
                                AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                 THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END;
    INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt)
    SELECT DISTINCT ON (k.id) k.id, NEW.scope_id, raised_event, 'high',
           'dead_letter:' || NEW.id || ':' || NEW.dead_letter_count, NEW.id, NEW.endpoint_id, s.include_excerpt
    FROM sinks k
    JOIN sink_subscriptions s ON s.sink_id = k.id
    WHERE k.scope_id = NEW.scope_id AND k.enabled
      AND raised_event = ANY (s.events)
      AND (cardinality(s.queues) = 0 OR NEW.queue = ANY (s.queues))
      AND (cardinality(s.endpoint_ids) = 0 OR NEW.endpoint_id = ANY (s.endpoint_ids))
      AND (cardinality(s.webhook_ids) = 0
           OR EXISTS (SELECT 1 FROM events e WHERE e.id = NEW.event_id AND e.webhook_id = ANY (s.webhook_ids)))
    ORDER BY k.id, s.include_excerpt DESC
    ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held')
    DO UPDATE SET count = outbox.count + 1;
    RETURN NULL;
END $$;
DROP TABLE IF EXISTS outbox_events;
