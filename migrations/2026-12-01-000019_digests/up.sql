-- Queue digests (SPEC section 11): a scheduled summary of an owner scope's queues,
-- sent through the outbox to the digest's sinks (and optionally published to Cairn).

CREATE TABLE digests (
    id                    uuid PRIMARY KEY,
    scope_id              uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    name                  text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    -- The schedule as written (canonical form); parsed by the server, never by SQL.
    schedule              text NOT NULL CHECK (octet_length(schedule) BETWEEN 1 AND 200),
    -- Empty: every queue the scope owns.
    queues                text[] NOT NULL DEFAULT '{}' CHECK (cardinality(queues) <= 64),
    -- Sinks of the same scope, checked on write and again on send (a deleted sink is
    -- skipped, not an error).
    sink_ids              uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(sink_ids) <= 10),
    skip_when_quiet       boolean NOT NULL DEFAULT true,
    age_threshold_seconds integer NOT NULL DEFAULT 3600 CHECK (age_threshold_seconds BETWEEN 60 AND 604800),
    cairn_connection_id   uuid REFERENCES connections (id) ON DELETE SET NULL,
    cairn_ttl_seconds     integer NOT NULL DEFAULT 604800 CHECK (cairn_ttl_seconds BETWEEN 60 AND 2592000),
    -- The next send time. A scheduler claims a due time by moving this forward with a
    -- conditional UPDATE (… WHERE next_send_at = <the due time>), so each send time is
    -- taken by exactly one instance.
    next_send_at          timestamptz NOT NULL,
    -- The last send time that was evaluated (sent or skipped as quiet): the start of
    -- the next digest's "since".
    covered_until         timestamptz,
    created_by            uuid REFERENCES humans (id) ON DELETE SET NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (scope_id, name)
);
CREATE INDEX digests_due_idx ON digests (next_send_at);
CREATE INDEX digests_scope_idx ON digests (scope_id);

-- What happened at each send time: sent, skipped (quiet, or too late after downtime),
-- and for a Cairn digest whether publishing worked. A run waiting for its Cairn call
-- is `publishing` with a claim that lapses, so a crash between the claim and the call
-- is finished by any instance.
CREATE TABLE digest_runs (
    id              uuid PRIMARY KEY,
    digest_id       uuid NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
    send_at         timestamptz NOT NULL,
    outcome         text NOT NULL CHECK (outcome IN ('publishing', 'sent', 'skipped_quiet', 'skipped_late')),
    quiet           boolean NOT NULL,
    -- Sections that could not be measured (never shown as zero).
    unavailable     integer NOT NULL DEFAULT 0 CHECK (unavailable >= 0),
    -- The digest's text (Markdown-flavoured plain text), kept for the sinks' message
    -- and the Board; no payload ever, only counts, names, truncated titles and links.
    body            text NOT NULL CHECK (octet_length(body) <= 65536),
    title           text NOT NULL CHECK (octet_length(title) <= 512),
    sinks_told      integer NOT NULL DEFAULT 0 CHECK (sinks_told >= 0),
    artifact_url    text CHECK (octet_length(artifact_url) <= 2048),
    cairn_error     text CHECK (octet_length(cairn_error) <= 200),
    claimed_until   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (digest_id, send_at)
);
CREATE INDEX digest_runs_digest_idx ON digest_runs (digest_id, send_at DESC);
CREATE INDEX digest_runs_publishing_idx ON digest_runs (claimed_until) WHERE outcome = 'publishing';

-- The digest's "notifications that could not be delivered" section reads these.
CREATE INDEX outbox_undeliverable_idx ON outbox (scope_id, next_attempt_at) WHERE status = 'undeliverable';

-- Every delivered `todo.ready` doorbell, once per todo (the first hook that took it):
-- a ring whose todo is not claimed within SWITCHBOARD_DOORBELL_ACK_SECONDS is unheard.
-- Once its window has passed, the digest scheduler decides each ring once: a heard ring
-- is deleted, an unheard one marked, so the table holds only rings still inside their
-- window and unheard ones, and a digest counts without checking every ring's attempts.
CREATE TABLE doorbell_rings (
    todo_id     uuid PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    queue       text NOT NULL,
    rung_at     timestamptz NOT NULL DEFAULT now(),
    -- NULL: not decided yet; true: nobody claimed the todo within the window.
    unheard     boolean CHECK (unheard)
);
CREATE INDEX doorbell_rings_endpoint_idx ON doorbell_rings (endpoint_id, rung_at);
-- Retention deletes old rings oldest first.
CREATE INDEX doorbell_rings_rung_idx ON doorbell_rings (rung_at);
-- The rings still to decide, oldest first.
CREATE INDEX doorbell_rings_undecided_idx ON doorbell_rings (rung_at) WHERE unheard IS NULL;
