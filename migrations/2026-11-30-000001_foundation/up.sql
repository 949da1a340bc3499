-- Foundation: tenancy (humans, teams, owner scopes, operator tokens), endpoints,
-- events, todos and their attempt history.

CREATE TABLE humans (
    id            uuid PRIMARY KEY,
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    display_name  text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    password_hash text,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX humans_email_key ON humans (lower(email));

CREATE TABLE teams (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX teams_name_key ON teams (lower(name));

-- Every tenant resource belongs to exactly one owner scope: a human's own, or a team's.
CREATE TABLE owner_scopes (
    id       uuid PRIMARY KEY,
    human_id uuid UNIQUE REFERENCES humans (id) ON DELETE CASCADE,
    team_id  uuid UNIQUE REFERENCES teams (id) ON DELETE CASCADE,
    CHECK (num_nonnulls(human_id, team_id) = 1)
);

CREATE TABLE team_members (
    team_id  uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    human_id uuid NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
    role     text NOT NULL CHECK (role IN ('admin', 'member')),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, human_id)
);
CREATE INDEX team_members_human_idx ON team_members (human_id);

-- Operator API credentials (sbo_...). Only the SHA-256 of the token is stored.
CREATE TABLE operator_tokens (
    id           uuid PRIMARY KEY,
    human_id     uuid NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    token_prefix text NOT NULL,
    label        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz
);

-- Agent credentials (sbk_...), each owned by one scope.
CREATE TABLE endpoints (
    id                    uuid PRIMARY KEY,
    scope_id              uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    slug                  text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    token_hash            bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    token_prefix          text NOT NULL,
    grants                text[] NOT NULL,
    state                 text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'revoked')),
    revoked_at            timestamptz,
    expires_at            timestamptz,
    default_lease_seconds integer CHECK (default_lease_seconds BETWEEN 60 AND 86400),
    presence              text NOT NULL DEFAULT 'out' CHECK (presence IN ('in', 'out')),
    presence_changed_at   timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    CHECK ((state = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX endpoints_scope_idx ON endpoints (scope_id);
CREATE INDEX endpoints_expiry_idx ON endpoints (expires_at) WHERE state = 'active' AND expires_at IS NOT NULL;

-- The delivery log: one row per accepted inbound delivery (intake writes these).
CREATE TABLE events (
    id           uuid PRIMARY KEY,
    scope_id     uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    endpoint_id  uuid REFERENCES endpoints (id) ON DELETE SET NULL,
    source       text NOT NULL,
    event_type   text,
    external_id  text,
    trust_mode   text NOT NULL CHECK (trust_mode IN ('signed', 'token', 'open', 'operator')),
    verified     boolean NOT NULL,
    headers      jsonb NOT NULL DEFAULT '{}',
    payload      bytea,
    payload_size integer NOT NULL DEFAULT 0,
    disposition  text NOT NULL CHECK (disposition IN ('routed', 'dropped', 'quarantined', 'faulted')),
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_scope_received_idx ON events (scope_id, received_at DESC);

CREATE TABLE todos (
    id                   uuid PRIMARY KEY,
    endpoint_id          uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    -- Denormalised from the endpoint (which never changes owner) so that owner-wide
    -- listings such as the dead letters stay on one index.
    scope_id             uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    queue                text NOT NULL,
    source               text,
    kind                 text,
    title                text NOT NULL,
    payload              jsonb,
    payload_size         integer NOT NULL DEFAULT 0,
    event_id             uuid REFERENCES events (id) ON DELETE SET NULL,
    idempotency_key      text,
    state                text NOT NULL CHECK (state IN ('pending', 'claimed', 'input_required', 'auth_required', 'done', 'failed', 'canceled')),
    attempt              integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    max_attempts         integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
    attempts_total       integer NOT NULL DEFAULT 0 CHECK (attempts_total >= 0),
    -- Who holds the claim. Today always the todo's own endpoint; kept separate because
    -- claims by other principals (a human on the Board) are planned.
    claimed_by           uuid REFERENCES endpoints (id) ON DELETE SET NULL,
    lease_expires_at     timestamptz,
    lease_token_hash     bytea,
    interrupt_reason     text,
    interrupt_expires_at timestamptz,
    interrupt_wait_seconds integer CHECK (interrupt_wait_seconds BETWEEN 1 AND 604800),
    next_retry_at        timestamptz,
    result               jsonb,
    dead_reason          text CHECK (dead_reason IN ('attempts_exhausted', 'lease_expired', 'interrupt_expired', 'endpoint_revoked')),
    dead_lettered_at     timestamptz,
    dead_letter_count    integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    claimed_at           timestamptz,
    completed_at         timestamptz,
    -- A dead letter is failed with no retry scheduled; it always knows why and when.
    CHECK ((state = 'failed' AND next_retry_at IS NULL) = (dead_reason IS NOT NULL AND dead_lettered_at IS NOT NULL)),
    CHECK ((state = 'claimed') = (lease_expires_at IS NOT NULL)),
    CHECK ((state IN ('input_required', 'auth_required')) = (interrupt_expires_at IS NOT NULL)),
    CHECK ((interrupt_expires_at IS NULL) = (interrupt_wait_seconds IS NULL)),
    CHECK (next_retry_at IS NULL OR state = 'failed')
);

-- claim_next on one queue: oldest pending first. Ordering by (created_at, id) inside a
-- pending-only index keeps the planner off the primary key when most rows are done.
CREATE INDEX todos_claim_queue_idx ON todos (endpoint_id, queue, created_at, id) WHERE state = 'pending';
-- claim_next on any queue of the endpoint (quarantine is never drainable).
CREATE INDEX todos_claim_any_idx ON todos (endpoint_id, created_at, id) WHERE state = 'pending' AND queue <> 'quarantine';
-- Reapers and the retry scheduler.
CREATE INDEX todos_lease_reap_idx ON todos (lease_expires_at) WHERE state = 'claimed';
CREATE INDEX todos_interrupt_reap_idx ON todos (interrupt_expires_at) WHERE state IN ('input_required', 'auth_required');
CREATE INDEX todos_retry_due_idx ON todos (next_retry_at) WHERE state = 'failed' AND next_retry_at IS NOT NULL;
-- list_todos (newest first) and the revocation cascade.
CREATE INDEX todos_endpoint_created_idx ON todos (endpoint_id, created_at DESC, id DESC);
-- The dead-letter listing, owner-wide, newest first.
CREATE INDEX todos_dead_letters_idx ON todos (scope_id, dead_lettered_at DESC, id DESC)
    WHERE state = 'failed' AND next_retry_at IS NULL AND queue <> 'quarantine';
-- Idempotency among live todos: a parked retry keeps its key, a dead letter releases it.
-- Quarantined deliveries hold no key (agents never see them; release re-routes them).
CREATE UNIQUE INDEX todos_idempotency_key ON todos (endpoint_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state NOT IN ('done', 'canceled')
      AND NOT (state = 'failed' AND next_retry_at IS NULL) AND queue <> 'quarantine';
CREATE INDEX todos_event_idx ON todos (event_id) WHERE event_id IS NOT NULL;

CREATE TABLE todo_attempts (
    todo_id           uuid NOT NULL REFERENCES todos (id) ON DELETE CASCADE,
    seq               integer NOT NULL CHECK (seq >= 1),
    claimer_endpoint_id uuid REFERENCES endpoints (id) ON DELETE SET NULL,
    claimant          text,
    relay             boolean NOT NULL DEFAULT false,
    claimed_at        timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz,
    lease_expires_at  timestamptz NOT NULL,
    ended_at          timestamptz,
    outcome           text CHECK (outcome IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'interrupt_expired', 'canceled', 'revoked')),
    disposition       text CHECK (disposition IN ('done', 'retry_scheduled', 'requeued', 'dead_lettered', 'canceled')),
    summary           text CHECK (octet_length(summary) <= 2048),
    summary_truncated boolean NOT NULL DEFAULT false,
    artifact          text CHECK (octet_length(artifact) <= 512),
    PRIMARY KEY (todo_id, seq),
    CHECK (num_nulls(ended_at, outcome, disposition) IN (0, 3)),
    -- At most one open attempt per todo.
    CONSTRAINT todo_attempts_one_open EXCLUDE USING btree (todo_id WITH =) WHERE (ended_at IS NULL)
);
