-- Every change to an endpoint that can change how its token authenticates is announced
-- on the channel `switchboard_auth` with the endpoint's id: token rotation, state
-- (revocation, expiry by the sweep), expires_at, grants, default lease, owner scope,
-- slug, and deletion. Each instance LISTENs and forgets that endpoint's cached
-- verified tokens at once, so a change made through any instance, the CLI or psql is
-- honoured from the next notification on. NOTIFY is delivered at commit; the same
-- payload twice in one transaction is sent once. Presence writes are not announced.
-- A TRUNCATE (by hand only) announces `*`, which makes every instance forget everything.
--
-- Safe to run under live traffic: it only adds functions and triggers, and an instance
-- of the previous version simply does not listen.

-- Creating a trigger waits for running transactions on its table and queues every
-- write behind it: give up (and let the instance restart) rather than stall them.
SET LOCAL lock_timeout = '5s';

CREATE FUNCTION switchboard_auth_endpoint_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('switchboard_auth', '*');
    ELSE
        -- The cache holds what the old row said: UPDATE and DELETE name the old id.
        PERFORM pg_notify('switchboard_auth', OLD.id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER endpoints_auth_changed_update
    AFTER UPDATE ON endpoints
    FOR EACH ROW WHEN (
        OLD.id IS DISTINCT FROM NEW.id
        OR OLD.token_hash IS DISTINCT FROM NEW.token_hash
        OR OLD.state IS DISTINCT FROM NEW.state
        OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
        OR OLD.grants IS DISTINCT FROM NEW.grants
        OR OLD.default_lease_seconds IS DISTINCT FROM NEW.default_lease_seconds
        OR OLD.scope_id IS DISTINCT FROM NEW.scope_id
        OR OLD.slug IS DISTINCT FROM NEW.slug)
    EXECUTE FUNCTION switchboard_auth_endpoint_changed();

CREATE TRIGGER endpoints_auth_changed_delete
    AFTER DELETE ON endpoints
    FOR EACH ROW EXECUTE FUNCTION switchboard_auth_endpoint_changed();

CREATE TRIGGER endpoints_auth_changed_truncate
    AFTER TRUNCATE ON endpoints
    FOR EACH STATEMENT EXECUTE FUNCTION switchboard_auth_endpoint_changed();
