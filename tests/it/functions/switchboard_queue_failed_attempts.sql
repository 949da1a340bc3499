CREATE OR REPLACE FUNCTION public.switchboard_queue_failed_attempts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    INSERT INTO queue_failed_attempts (endpoint_id, queue, minute, n)
    SELECT t.endpoint_id, t.queue, date_trunc('minute', a.ended_at), count(*)
    FROM added a JOIN todos t ON t.id = a.todo_id
    WHERE a.outcome IN ('failed', 'lease_expired', 'reaped', 'interrupt_expired')
      AND a.ended_at IS NOT NULL AND t.queue <> 'quarantine'
    GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$function$
