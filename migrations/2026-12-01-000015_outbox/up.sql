-- The sink outbox (SPEC section 10): one row per (event, sink) that must reach a
-- human, written in the transaction of the state change that causes it, so a rolled
-- back change leaves none and a crash loses none. Workers claim due rows with SKIP
-- LOCKED and record what the sink answered.

CREATE TABLE outbox (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Kept (as NULL) when the sink is deleted: the delivery record stays.
    sink_id         uuid REFERENCES sinks (id) ON DELETE SET NULL,
    scope_id        uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    event           text NOT NULL CHECK (event IN ('todo.dead_lettered', 'relay.exhausted', 'delivery.quarantined',
                                                   'rule.notify', 'digest', 'agent.notify')),
    severity        text NOT NULL CHECK (severity IN ('low', 'normal', 'high')),
    -- A repeat with the same key folds into the row while it is still open.
    dedup_key       text NOT NULL CHECK (octet_length(dedup_key) <= 300),
    -- What the message is about: a todo, or (for a revocation cascade) an endpoint.
    -- No foreign keys: retention may prune a todo before its message is read.
    todo_id         uuid,
    endpoint_id     uuid,
    -- What the message needs beyond its subject (a cascade's count, the endpoint's slug).
    facts           jsonb NOT NULL DEFAULT '{}',
    include_excerpt boolean NOT NULL DEFAULT false,
    count           integer NOT NULL DEFAULT 1 CHECK (count >= 1),
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'held', 'coalesced', 'partial', 'undeliverable')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A worker's claim: until then no other worker takes the row; a worker that died
    -- leaves it to be taken over once it lapses.
    claimed_until   timestamptz,
    last_error      text CHECK (octet_length(last_error) <= 64),
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz
);
CREATE UNIQUE INDEX outbox_open_dedup ON outbox (sink_id, dedup_key) WHERE status IN ('pending', 'held');
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_held_idx ON outbox (sink_id, created_at) WHERE status = 'held';
CREATE INDEX outbox_sink_idx ON outbox (sink_id, created_at DESC);
CREATE INDEX outbox_todo_idx ON outbox (todo_id) WHERE todo_id IS NOT NULL;
CREATE INDEX sinks_scope_idx ON sinks (scope_id) WHERE enabled;

-- Every dead letter that is news (not a revocation cascade, which tells each sink once
-- from the cascade itself) is queued for every enabled sink of the todo's scope whose
-- subscriptions match, in the transaction that dead-lettered it, whichever statement
-- did (agent fail, operator fail, the lease and interrupt reapers). A todo whose
-- history holds relay attempts raises relay.exhausted instead.
CREATE FUNCTION switchboard_outbox_dead_letter() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    raised_event text;
BEGIN
    IF NEW.dead_reason = 'endpoint_revoked' THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    raised_event := CASE WHEN EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = NEW.id
                                AND (a.relay OR a.claimant ~ '^harness/[^/]+/[^/]+/run-[0-9]+$'))
                 THEN 'relay.exhausted' ELSE 'todo.dead_lettered' END;
    INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt)
    SELECT DISTINCT ON (k.id) k.id, NEW.scope_id, raised_event, 'high',
           'dead_letter:' || NEW.id || ':' || NEW.dead_letter_count, NEW.id, NEW.endpoint_id, s.include_excerpt
    FROM sinks k
    JOIN sink_subscriptions s ON s.sink_id = k.id
    WHERE k.scope_id = NEW.scope_id AND k.enabled
      AND raised_event = ANY (s.events)
      AND (cardinality(s.queues) = 0 OR NEW.queue = ANY (s.queues))
      AND (cardinality(s.endpoint_ids) = 0 OR NEW.endpoint_id = ANY (s.endpoint_ids))
      AND (cardinality(s.webhook_ids) = 0
           OR EXISTS (SELECT 1 FROM events e WHERE e.id = NEW.event_id AND e.webhook_id = ANY (s.webhook_ids)))
    ORDER BY k.id, s.include_excerpt DESC
    ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held')
    DO UPDATE SET count = outbox.count + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER todos_dead_letter_outbox
    AFTER UPDATE OF dead_letter_count ON todos
    FOR EACH ROW WHEN (NEW.dead_letter_count > OLD.dead_letter_count)
    EXECUTE FUNCTION switchboard_outbox_dead_letter();

-- A delivery held in quarantine is news for the sinks of the webhook's scope (the
-- held todo sits on the webhook's own endpoint, in that scope), queued in the
-- statement that recorded it. Repeats from one webhook within ten minutes fold into one
-- row ("and N more").
CREATE FUNCTION switchboard_outbox_quarantined() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    held_webhook uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sinks WHERE scope_id = NEW.scope_id AND enabled) THEN
        RETURN NULL;
    END IF;
    SELECT e.webhook_id INTO held_webhook FROM events e WHERE e.id = NEW.event_id;
    INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, include_excerpt)
    SELECT DISTINCT ON (k.id) k.id, NEW.scope_id, 'delivery.quarantined', 'normal',
           'quarantine:' || COALESCE(held_webhook::text, 'none') || ':'
             || extract(epoch FROM date_bin('10 minutes', now(), timestamptz 'epoch'))::bigint,
           NEW.id, NEW.endpoint_id, s.include_excerpt
    FROM sinks k
    JOIN sink_subscriptions s ON s.sink_id = k.id
    WHERE k.scope_id = NEW.scope_id AND k.enabled
      AND 'delivery.quarantined' = ANY (s.events)
      AND s.min_severity IN ('low', 'normal')
      AND (cardinality(s.queues) = 0 OR 'quarantine' = ANY (s.queues))
      AND (cardinality(s.endpoint_ids) = 0 OR NEW.endpoint_id = ANY (s.endpoint_ids))
      AND (cardinality(s.webhook_ids) = 0 OR held_webhook = ANY (s.webhook_ids))
    ORDER BY k.id, s.include_excerpt DESC
    ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held')
    DO UPDATE SET count = outbox.count + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER todos_quarantined_outbox
    AFTER INSERT ON todos
    FOR EACH ROW WHEN (NEW.queue = 'quarantine')
    EXECUTE FUNCTION switchboard_outbox_quarantined();

-- Wakes every instance's outbox worker at the commit that queued something. Only
-- when the statement inserted rows: a revocation cascade runs its INSERT whether or
-- not any sink subscribes, and a NOTIFY for nothing would still take the server's
-- notification lock at that commit.
CREATE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queued) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER outbox_queued
    AFTER INSERT ON outbox
    REFERENCING NEW TABLE AS queued
    FOR EACH STATEMENT EXECUTE FUNCTION switchboard_outbox_queued();
