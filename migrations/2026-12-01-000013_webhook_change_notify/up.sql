-- Every change to a webhook that can change how a delivery to it is verified or routed
-- is announced on the auth channel as `webhook:<id>`: ingest token, signing secret,
-- unverified flag, trusted actors, rules, queue, attempt cap, source, owner, endpoint,
-- and deletion. Each instance's auth listener forgets that webhook's cached entry, so
-- a change made through any instance, the CLI or psql is honoured from the next
-- notification on. The refused-deliveries counter is not announced (it changes on
-- every refused delivery and changes nothing a delivery depends on).
--
-- Safe to run under live traffic: it only adds a function and triggers, and an
-- instance of the previous version simply does not listen for them.

-- Creating a trigger waits for running transactions on its table and queues every
-- write behind it: give up (and let the instance restart) rather than stall them.
SET LOCAL lock_timeout = '5s';

CREATE FUNCTION switchboard_webhook_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('switchboard_auth', '*');
    ELSE
        -- The cache holds what the old row said: UPDATE and DELETE name the old id.
        PERFORM pg_notify('switchboard_auth', 'webhook:' || OLD.id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER webhooks_changed_update
    AFTER UPDATE ON webhooks
    FOR EACH ROW WHEN (
        (OLD.id, OLD.scope_id, OLD.endpoint_id, OLD.source_type, OLD.queue, OLD.max_attempts,
         OLD.ingest_token_hash, OLD.signing_secret, OLD.unverified, OLD.trusted_actors, OLD.rules)
        IS DISTINCT FROM
        (NEW.id, NEW.scope_id, NEW.endpoint_id, NEW.source_type, NEW.queue, NEW.max_attempts,
         NEW.ingest_token_hash, NEW.signing_secret, NEW.unverified, NEW.trusted_actors, NEW.rules))
    EXECUTE FUNCTION switchboard_webhook_changed();

CREATE TRIGGER webhooks_changed_delete
    AFTER DELETE ON webhooks
    FOR EACH ROW EXECUTE FUNCTION switchboard_webhook_changed();

CREATE TRIGGER webhooks_changed_truncate
    AFTER TRUNCATE ON webhooks
    FOR EACH STATEMENT EXECUTE FUNCTION switchboard_webhook_changed();
