CREATE OR REPLACE FUNCTION public.switchboard_hook_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('switchboard_hooks', OLD.endpoint_id::text);
    END IF;
    -- A hook moved to another endpoint (by hand: the product never moves one) changes both.
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.endpoint_id IS DISTINCT FROM OLD.endpoint_id) THEN
        PERFORM pg_notify('switchboard_hooks', NEW.endpoint_id::text);
    END IF;
    RETURN NULL;
END
$function$
