-- The outbox's wake-up NOTIFY only when no worker already has a reason to look: the
-- statement inserted rows and the outbox held no other due row that nobody has claimed.
--
-- Why: a transaction that sent a NOTIFY takes the server's one notification lock at
-- commit and holds it until its commit is flushed, so every dead-letter transaction
-- that notified committed one at a time (the outbox benchmark: 16 sessions failing
-- todos at the cap waited on `Lock:object` at COMMIT, 955 a second with one subscribed
-- sink against 3 574 with none).
--
-- Why it loses nothing: a due, unclaimed row was either notified by its own insert or
-- skipped for an earlier one, back to one that did notify; the worker that wakes runs
-- passes until one claims nothing (actors/outbox.rs), so it reaches every such row. A
-- row committed just after that last empty pass is found by the poll
-- (SWITCHBOARD_OUTBOX_POLL_MS): later, never lost. An idle outbox always notifies, so
-- a dead letter on a quiet system still wakes the worker at once.
CREATE OR REPLACE FUNCTION switchboard_outbox_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queued) AND NOT EXISTS (
        SELECT 1 FROM outbox o
        WHERE o.status = 'pending' AND o.next_attempt_at <= now()
          AND (o.claimed_until IS NULL OR o.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = o.id)) THEN
        PERFORM pg_notify('switchboard_outbox', '');
    END IF;
    RETURN NULL;
END $$;
