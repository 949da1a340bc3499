-- The connection vault and notification sinks (SPEC section 10): owner-scoped
-- credentials, sealed and write-only; sinks that post to Gotify or an Apprise API
-- server with one of them; and each sink's subscriptions.

CREATE TABLE connections (
    id          uuid PRIMARY KEY,
    scope_id    uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    kind        text NOT NULL CHECK (kind IN ('gotify', 'apprise', 'cairn')),
    -- Where a cairn connection publishes (sinks carry their own base URL).
    base_url    text CHECK (octet_length(base_url) BETWEEN 1 AND 2048),
    -- Sealed by the vault (enc:v2: a random data key per row, wrapped by the master
    -- key). Never returned by any route, page, log line or metric.
    secret      text NOT NULL,
    -- First 12 hex characters of SHA-256 of the secret: shown instead of it.
    fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{12}$'),
    created_by  uuid REFERENCES humans (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    rotated_at  timestamptz,
    UNIQUE (scope_id, name),
    CHECK (kind <> 'cairn' OR base_url IS NOT NULL)
);

CREATE TABLE sinks (
    id              uuid PRIMARY KEY,
    scope_id        uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    kind            text NOT NULL CHECK (kind IN ('gotify', 'apprise')),
    base_url        text NOT NULL CHECK (octet_length(base_url) BETWEEN 1 AND 2048),
    -- Same scope and kind, checked on write and again on use. A connection a sink
    -- uses cannot be deleted (the sink goes first).
    connection_id   uuid NOT NULL REFERENCES connections (id) ON DELETE RESTRICT,
    -- Apprise only: `key` (POST {base}/notify/{key}, the key is the connection's
    -- secret) or `urls` (POST {base}/notify/ with the connection's secret as urls).
    apprise_mode    text CHECK (apprise_mode IN ('key', 'urls')),
    enabled         boolean NOT NULL DEFAULT true,
    -- The token bucket, kept here so that it holds across instances.
    budget_per_hour integer NOT NULL CHECK (budget_per_hour BETWEEN 1 AND 3600),
    burst           integer NOT NULL CHECK (burst BETWEEN 1 AND 100),
    tokens          double precision NOT NULL CHECK (tokens >= 0),
    tokens_at       timestamptz NOT NULL DEFAULT now(),
    -- Test sends in the current minute (at most 6), counted here so that the limit
    -- holds across instances.
    tests_window_at timestamptz,
    tests_in_window integer NOT NULL DEFAULT 0 CHECK (tests_in_window >= 0),
    created_by      uuid REFERENCES humans (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (scope_id, name),
    CHECK ((kind = 'apprise') = (apprise_mode IS NOT NULL))
);
CREATE INDEX sinks_connection_idx ON sinks (connection_id);

CREATE TABLE sink_subscriptions (
    id              uuid PRIMARY KEY,
    sink_id         uuid NOT NULL REFERENCES sinks (id) ON DELETE CASCADE,
    position        integer NOT NULL CHECK (position >= 0),
    events          text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 16),
    -- Empty: no filter on that field.
    queues          text[] NOT NULL DEFAULT '{}' CHECK (cardinality(queues) <= 32),
    endpoint_ids    uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(endpoint_ids) <= 32),
    webhook_ids     uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(webhook_ids) <= 32),
    min_severity    text NOT NULL DEFAULT 'low' CHECK (min_severity IN ('low', 'normal', 'high')),
    include_excerpt boolean NOT NULL DEFAULT false,
    UNIQUE (sink_id, position)
);
