-- Intake: webhooks (owned by a scope, bound to an endpoint and default queue), and the
-- event log's link to them with dedup by the provider's delivery id.

CREATE TABLE webhooks (
    id                  uuid PRIMARY KEY,
    scope_id            uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    endpoint_id         uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    source_type         text NOT NULL CHECK (source_type IN ('github', 'gitea', 'stripe', 'standard', 'generic')),
    queue               text NOT NULL,
    max_attempts        integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
    -- The ingest URL's token is a credential: only its SHA-256 is kept.
    ingest_token_hash   bytea NOT NULL UNIQUE CHECK (length(ingest_token_hash) = 32),
    ingest_token_prefix text NOT NULL,
    -- Sealed by the vault (enc:v1 envelope); NULL for generic and unverified webhooks.
    signing_secret      text,
    secret_fingerprint  text,
    unverified          boolean NOT NULL DEFAULT false,
    trusted_actors      jsonb,
    rules               jsonb NOT NULL DEFAULT '{"rules": []}',
    -- Refused deliveries store nothing but this counter.
    refused_deliveries  bigint NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK (source_type <> 'generic' OR (signing_secret IS NULL AND NOT unverified)),
    CHECK (NOT unverified OR signing_secret IS NULL)
);
CREATE INDEX webhooks_scope_idx ON webhooks (scope_id);

ALTER TABLE events ADD COLUMN webhook_id uuid REFERENCES webhooks (id) ON DELETE SET NULL;
-- A redelivery (same provider delivery id on the same webhook) is recorded once.
CREATE UNIQUE INDEX events_delivery_dedup ON events (webhook_id, external_id)
    WHERE webhook_id IS NOT NULL AND external_id IS NOT NULL;

ALTER TABLE todos ADD COLUMN quarantine_reason text
    CHECK (quarantine_reason IN ('untrusted_actor', 'rule_fault', 'rule_action'));
