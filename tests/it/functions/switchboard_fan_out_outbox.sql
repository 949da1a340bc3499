CREATE OR REPLACE FUNCTION public.switchboard_fan_out_outbox(batch integer)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    taken_count integer;
BEGIN
    PERFORM set_config('switchboard.fanning_out', 'on', true);
    WITH taken AS (
        DELETE FROM outbox_events
        WHERE id = ANY (ARRAY(SELECT e.id FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
                              ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
        RETURNING *
    ), raised AS (
        SELECT t.*,
               CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.todo_id
                                   AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event
        FROM taken t
    ), queued AS (
        INSERT INTO outbox (id, sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt,
                            created_at)
        SELECT DISTINCT ON (r.id, k.id) switchboard_outbox_pair_id(r.id, k.id), k.id, r.scope_id, r.raised_event, 'high',
               'dead_letter:' || r.todo_id || ':' || r.dead_letter_count, r.todo_id, r.endpoint_id,
               s.include_excerpt, r.created_at
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE r.raised_event = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0
               OR EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id AND e.webhook_id = ANY (s.webhook_ids)))
        ORDER BY r.id, k.id, s.include_excerpt DESC
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) INTO taken_count FROM taken;
    PERFORM set_config('switchboard.fanning_out', 'off', true);
    RETURN taken_count;
END $function$
