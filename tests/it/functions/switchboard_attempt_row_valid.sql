CREATE OR REPLACE FUNCTION public.switchboard_attempt_row_valid(seq integer, ended_at timestamp with time zone, outcome text, disposition text, summary text, artifact text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    RETURN (seq >= 1) IS NOT FALSE
       AND (outcome IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'interrupt_expired',
                        'canceled', 'revoked')) IS NOT FALSE
       AND (disposition IN ('done', 'retry_scheduled', 'requeued', 'dead_lettered', 'canceled')) IS NOT FALSE
       AND (octet_length(summary) <= 2048) IS NOT FALSE
       AND (octet_length(artifact) <= 512) IS NOT FALSE
       -- Closed is all three of when, how and to what effect; open is none of them.
       AND (num_nulls(ended_at, outcome, disposition) IN (0, 3)) IS NOT FALSE;
END $function$
