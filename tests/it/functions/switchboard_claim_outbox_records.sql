CREATE OR REPLACE FUNCTION public.switchboard_claim_outbox_records(claim_seconds integer, batch integer)
 RETURNS TABLE(event_ref bigint, id uuid, sink_id uuid, event text, todo_id uuid, endpoint_id uuid, include_excerpt boolean, created_at timestamp with time zone, fact_todo_id uuid, queue text, title text, dead_reason text, attempt integer, max_attempts integer, summary text, artifact text, source text, webhook_id uuid, excerpt text)
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
    ), raised AS MATERIALIZED (
        SELECT tk.id AS event_ref, tk.scope_id, tk.todo_id, tk.endpoint_id, tk.queue AS recorded_queue, tk.event_id,
               tk.created_at,
               CASE WHEN coalesce(a.relay, false) THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event,
               td.id AS fact_todo_id, td.queue, td.title, td.dead_reason, td.attempt, td.max_attempts,
               a.summary, a.artifact, td.source, ev.webhook_id
        FROM taken tk
        LEFT JOIN todos td ON td.id = tk.todo_id
        LEFT JOIN LATERAL (
            SELECT x.summary, x.artifact,
                   EXISTS (SELECT 1 FROM todo_attempts y WHERE y.todo_id = tk.todo_id
                             AND (y.relay OR y.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$')) AS relay
            FROM todo_attempts x WHERE x.todo_id = tk.todo_id ORDER BY x.seq DESC LIMIT 1) a ON true
        LEFT JOIN events ev ON ev.id = tk.event_id
    ), pairs AS (
        SELECT DISTINCT ON (r.event_ref, k.id) r.*, switchboard_outbox_pair_id(r.event_ref, k.id) AS pair_id,
               k.id AS pair_sink, s.include_excerpt AS with_excerpt
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE r.raised_event = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.recorded_queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0 OR r.webhook_id = ANY (s.webhook_ids))
        ORDER BY r.event_ref, k.id, s.include_excerpt DESC
    ), open AS MATERIALIZED (
        SELECT p.* FROM pairs p WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = p.pair_id)
    )
    SELECT o.event_ref, o.pair_id, o.pair_sink, o.raised_event, o.todo_id, o.endpoint_id, o.with_excerpt, o.created_at,
           o.fact_todo_id, o.queue, o.title, o.dead_reason, o.attempt, o.max_attempts, o.summary, o.artifact, o.source,
           o.webhook_id,
           CASE WHEN o.with_excerpt THEN (SELECT left(p.payload::text, 2000) FROM todos p WHERE p.id = o.todo_id) END
    FROM open o
    UNION ALL
    SELECT t.id, NULL::uuid, NULL::uuid, NULL::text, t.todo_id, t.endpoint_id, false, t.created_at,
           NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::integer, NULL::text, NULL::text,
           NULL::text, NULL::uuid, NULL::text
    FROM taken t WHERE NOT EXISTS (SELECT 1 FROM open o WHERE o.event_ref = t.id);
END $function$
