CREATE OR REPLACE FUNCTION public.switchboard_claim_outbox(claim_seconds integer, batch integer, busy uuid[])
 RETURNS SETOF outbox
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY
    UPDATE outbox SET claimed_until = now() + make_interval(secs => claim_seconds), attempts = attempts + 1
    WHERE id = ANY (ARRAY(
        SELECT o.id FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND (o.sink_id IS NULL OR o.sink_id <> ALL (busy))
        ORDER BY o.next_attempt_at LIMIT batch FOR UPDATE SKIP LOCKED))
    RETURNING outbox.*;
END $function$
