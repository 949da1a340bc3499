CREATE OR REPLACE FUNCTION public.switchboard_hook_endpoint_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('switchboard_hooks', OLD.id::text);
    ELSE
        PERFORM pg_notify('switchboard_hooks', NEW.id::text);
    END IF;
    RETURN NULL;
END
$function$
