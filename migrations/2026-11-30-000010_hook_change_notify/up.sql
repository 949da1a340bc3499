-- Every change that can alter which hooks a todo is announced to, or how, is announced
-- on the channel `switchboard_hooks` with the endpoint's id. Each instance's dispatcher
-- LISTENs and forgets that endpoint's cached hook match at once, so a hook created,
-- changed, rotated, disabled or deleted — through any instance, or by hand in psql —
-- and an endpoint revoked or expired are honoured from the next notification on.
-- NOTIFY is delivered at commit; the same payload twice in one transaction is sent once.

CREATE FUNCTION switchboard_hook_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;

CREATE FUNCTION switchboard_hook_endpoint_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('switchboard_hooks', OLD.id::text);
    ELSE
        PERFORM pg_notify('switchboard_hooks', NEW.id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER notify_hooks_changed_insert_delete
    AFTER INSERT OR DELETE ON notify_hooks
    FOR EACH ROW EXECUTE FUNCTION switchboard_hook_changed();

-- Health writes (failure counts, last status) are not announced unless they disable.
CREATE TRIGGER notify_hooks_changed_update
    AFTER UPDATE ON notify_hooks
    FOR EACH ROW WHEN (
        OLD.enabled IS DISTINCT FROM NEW.enabled
        OR OLD.url IS DISTINCT FROM NEW.url
        OR OLD.queues IS DISTINCT FROM NEW.queues
        OR OLD.secret IS DISTINCT FROM NEW.secret
        OR OLD.previous_secret IS DISTINCT FROM NEW.previous_secret
        OR OLD.previous_valid_until IS DISTINCT FROM NEW.previous_valid_until
        OR OLD.endpoint_id IS DISTINCT FROM NEW.endpoint_id)
    EXECUTE FUNCTION switchboard_hook_changed();

-- Presence and other endpoint updates are not announced; state and expiry are.
CREATE TRIGGER endpoints_hook_match_changed_update
    AFTER UPDATE ON endpoints
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
    EXECUTE FUNCTION switchboard_hook_endpoint_changed();

CREATE TRIGGER endpoints_hook_match_changed_delete
    AFTER DELETE ON endpoints
    FOR EACH ROW EXECUTE FUNCTION switchboard_hook_endpoint_changed();
