-- Fan-out grants to anyone (SPEC 13, "Fan-out grants"): a grant names its grantee by
-- reference, the lower-cased email or team name, whether or not that account exists
-- yet; routing resolves the reference on every delivery, so a grant to an address with
-- no account takes effect once the account (or team) exists. `fanout_grants` (grants by
-- scope) stays: the previous release routes by it, and this one still writes it for a
-- grantee that exists and reads it for grants made before this migration.
-- Additive: a new table, nothing else changes.
SET LOCAL lock_timeout = '5s';

CREATE TABLE fanout_grant_refs (
    endpoint_id  uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    grantee_kind text NOT NULL CHECK (grantee_kind IN ('human', 'team')),
    -- lower(email) for a human, lower(name) for a team: what the unique indexes on
    -- humans and teams compare.
    grantee_key  text NOT NULL CHECK (length(grantee_key) BETWEEN 1 AND 320),
    granted_by   uuid REFERENCES humans (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (endpoint_id, grantee_kind, grantee_key)
);
