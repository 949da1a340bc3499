CREATE OR REPLACE FUNCTION public.switchboard_todo_row_valid_2(state text, attempt integer, max_attempts integer, attempts_total integer, lease_expires_at timestamp with time zone, interrupt_expires_at timestamp with time zone, interrupt_wait_seconds integer, next_retry_at timestamp with time zone, dead_reason text, dead_lettered_at timestamp with time zone, quarantine_reason text, work_order text, attempt_ended_at timestamp with time zone, attempt_lease_expires_at timestamp with time zone, attempt_summary text, attempt_artifact text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    RETURN (state IN ('pending', 'claimed', 'input_required', 'auth_required', 'done', 'failed', 'canceled')) IS NOT FALSE
       AND (attempt >= 0) IS NOT FALSE
       AND (max_attempts BETWEEN 1 AND 100) IS NOT FALSE
       AND (attempts_total >= 0) IS NOT FALSE
       AND (interrupt_wait_seconds BETWEEN 1 AND 604800) IS NOT FALSE
       AND (dead_reason IN ('attempts_exhausted', 'lease_expired', 'interrupt_expired', 'endpoint_revoked')) IS NOT FALSE
       AND (quarantine_reason IN ('untrusted_actor', 'rule_fault', 'rule_action')) IS NOT FALSE
       AND (octet_length(work_order) <= 4096) IS NOT FALSE
       -- A dead letter is failed with no retry scheduled; it always knows why and when.
       AND ((state = 'failed' AND next_retry_at IS NULL) = (dead_reason IS NOT NULL AND dead_lettered_at IS NOT NULL)) IS NOT FALSE
       AND ((state = 'claimed') = (lease_expires_at IS NOT NULL)) IS NOT FALSE
       AND ((state IN ('input_required', 'auth_required')) = (interrupt_expires_at IS NOT NULL)) IS NOT FALSE
       AND ((interrupt_expires_at IS NULL) = (interrupt_wait_seconds IS NULL)) IS NOT FALSE
       AND (next_retry_at IS NULL OR state = 'failed') IS NOT FALSE
       -- Only a completed todo holds a closed attempt, and it ended with a lease.
       AND (attempt_ended_at IS NULL OR state = 'done') IS NOT FALSE
       AND ((attempt_ended_at IS NULL) = (attempt_lease_expires_at IS NULL)) IS NOT FALSE
       AND (octet_length(attempt_summary) <= 2048) IS NOT FALSE
       AND (octet_length(attempt_artifact) <= 512) IS NOT FALSE;
END $function$
