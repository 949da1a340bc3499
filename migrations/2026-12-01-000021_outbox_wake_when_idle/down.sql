CREATE OR REPLACE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queued) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;
