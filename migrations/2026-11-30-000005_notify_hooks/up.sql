-- Notify hooks: per endpoint, signed outbound notifications (todo.ready,
-- todo.dead_lettered) to a URL, with a queue filter, rotation and health.

CREATE TABLE notify_hooks (
    id                   uuid PRIMARY KEY,
    endpoint_id          uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    url                  text NOT NULL CHECK (octet_length(url) BETWEEN 1 AND 2048),
    -- Empty: every queue of the endpoint.
    queues               text[] NOT NULL DEFAULT '{}' CHECK (cardinality(queues) <= 32),
    enabled              boolean NOT NULL DEFAULT true,
    disabled_reason      text CHECK (disabled_reason IN ('operator', 'consecutive_failures')),
    -- Sealed by the vault (enc:v1 envelope): a signing key, not a credential hash,
    -- because every delivery needs it back.
    secret               text NOT NULL,
    -- The secret before the last rotation; receivers may still verify with it until
    -- previous_valid_until (dual signing).
    previous_secret      text,
    previous_valid_until timestamptz,
    consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_status          integer,
    last_error           text CHECK (octet_length(last_error) <= 256),
    last_attempt_at      timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK (enabled = (disabled_reason IS NULL)),
    CHECK ((previous_secret IS NULL) = (previous_valid_until IS NULL))
);
-- The dispatcher's lookup (enabled hooks of one endpoint) and the ceiling count.
CREATE INDEX notify_hooks_endpoint_idx ON notify_hooks (endpoint_id, created_at);
-- The sweep that forgets previous secrets once their 24 hours are over.
CREATE INDEX notify_hooks_previous_idx ON notify_hooks (previous_valid_until) WHERE previous_valid_until IS NOT NULL;
