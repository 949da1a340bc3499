CREATE OR REPLACE FUNCTION public.switchboard_claim_outbox_messages(claim_seconds integer, batch integer)
 RETURNS TABLE(event_ref bigint, id uuid, sink_id uuid, event text, todo_id uuid, endpoint_id uuid, record_scope uuid, dead_letter_count integer, include_excerpt boolean, created_at timestamp with time zone, fact_todo_id uuid, queue text, title text, dead_reason text, attempt integer, max_attempts integer, summary text, artifact text, source text, webhook_id uuid, excerpt text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH taken AS MATERIALIZED (
        UPDATE outbox_events SET claimed_until = now() + make_interval(secs => claim_seconds),
                                 reclaimed = outbox_events.claimed_until IS NOT NULL
        WHERE outbox_events.ctid = ANY (ARRAY(
            SELECT e.ctid FROM outbox_events e WHERE e.claimed_until IS NULL OR e.claimed_until < now()
            ORDER BY e.id LIMIT batch FOR UPDATE SKIP LOCKED))
          AND (outbox_events.claimed_until IS NULL OR outbox_events.claimed_until < now())
        RETURNING *
    ), raised AS MATERIALIZED (
        SELECT tk.*,
               CASE WHEN tk.relay IS NULL
                    THEN EXISTS (SELECT 1 FROM todo_attempts y WHERE y.todo_id = tk.todo_id
                                   AND (y.relay OR y.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                    ELSE tk.relay END AS with_relay,
               CASE WHEN tk.relay IS NULL AND tk.event_id IS NOT NULL
                    THEN (SELECT ev.webhook_id FROM events ev WHERE ev.id = tk.event_id)
                    ELSE tk.webhook_id END AS from_webhook
        FROM taken tk
    ), pairs AS (
        SELECT DISTINCT ON (r.id, k.id) r.*,
               CASE WHEN r.with_relay THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END AS raised_event,
               switchboard_outbox_pair_id(r.id, k.id) AS pair_id, k.id AS pair_sink,
               s.include_excerpt AS with_excerpt
        FROM raised r
        JOIN sinks k ON k.scope_id = r.scope_id AND k.enabled
        JOIN sink_subscriptions s ON s.sink_id = k.id
        WHERE (CASE WHEN r.with_relay THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END) = ANY (s.events)
          AND (cardinality(s.queues) = 0 OR r.queue = ANY (s.queues))
          AND (cardinality(s.endpoint_ids) = 0 OR r.endpoint_id = ANY (s.endpoint_ids))
          AND (cardinality(s.webhook_ids) = 0 OR r.from_webhook = ANY (s.webhook_ids))
        ORDER BY r.id, k.id, s.include_excerpt DESC
    ), open AS MATERIALIZED (
        SELECT p.* FROM pairs p
        WHERE NOT p.reclaimed OR NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = p.pair_id)
    )
    -- Facts only where the record carries them and no excerpt is wanted (the worker
    -- reads the todo for those).
    SELECT o.id, o.pair_id, o.pair_sink, o.raised_event, o.todo_id, o.endpoint_id, o.scope_id, o.dead_letter_count,
           o.with_excerpt, o.created_at,
           CASE WHEN o.relay IS NOT NULL AND NOT o.with_excerpt THEN o.todo_id END, o.queue, o.title, o.dead_reason,
           o.attempt, o.max_attempts, o.summary, o.artifact, o.source, o.from_webhook, NULL::text
    FROM open o
    UNION ALL
    SELECT t.id, NULL::uuid, NULL::uuid, NULL::text, t.todo_id, t.endpoint_id, t.scope_id, t.dead_letter_count, false,
           t.created_at, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::integer, NULL::text,
           NULL::text, NULL::text, NULL::uuid, NULL::text
    FROM taken t WHERE NOT EXISTS (SELECT 1 FROM open o WHERE o.id = t.id);
END $function$
