CREATE OR REPLACE FUNCTION public.switchboard_auth_endpoint_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('switchboard_auth', '*');
    ELSE
        -- The cache holds what the old row said: UPDATE and DELETE name the old id.
        PERFORM pg_notify('switchboard_auth', OLD.id::text);
    END IF;
    RETURN NULL;
END
$function$
