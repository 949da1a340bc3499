CREATE OR REPLACE FUNCTION public.switchboard_claim_outbox_events(claim_seconds integer, batch integer)
 RETURNS TABLE(event_ref bigint, id uuid, sink_id uuid, event text, todo_id uuid, endpoint_id uuid, include_excerpt boolean, created_at timestamp with time zone)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH taken AS (
        UPDATE outbox_events SET claimed_until = now() + make_interval(secs => claim_seconds)
        WHERE outbox_events.id = ANY (ARRAY(
            SELECT e.id FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
            ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
        RETURNING *
    ), raised AS (
        SELECT t.*,
               CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.todo_id
                                   AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event
        FROM taken t
    ), pairs AS (
        SELECT DISTINCT ON (r.id, k.id) r.id AS event_ref, switchboard_outbox_pair_id(r.id, k.id) AS id,
               k.id AS sink_id, r.raised_event AS event, r.todo_id, r.endpoint_id, s.include_excerpt, r.created_at
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE r.raised_event = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0
               OR EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id AND e.webhook_id = ANY (s.webhook_ids)))
        ORDER BY r.id, k.id, s.include_excerpt DESC
    ), open AS (
        SELECT p.* FROM pairs p WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = p.id)
    )
    SELECT o.event_ref, o.id, o.sink_id, o.event, o.todo_id, o.endpoint_id, o.include_excerpt, o.created_at
    FROM open o
    UNION ALL
    SELECT t.id, NULL::uuid, NULL::uuid, NULL::text, t.todo_id, t.endpoint_id, false, t.created_at
    FROM taken t WHERE NOT EXISTS (SELECT 1 FROM open o WHERE o.event_ref = t.id);
END $function$
