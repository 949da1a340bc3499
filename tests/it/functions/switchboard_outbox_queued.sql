CREATE OR REPLACE FUNCTION public.switchboard_outbox_queued()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF current_setting('switchboard.fanning_out', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM queued WHERE status = 'pending') AND NOT EXISTS (
        SELECT 1 FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = o.id)) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $function$
