-- Fan-out across owners: an endpoint's owner lets another owner's webhooks route
-- deliveries onto it. Without a grant, a rule may only fan out within its own scope.
CREATE TABLE fanout_grants (
    endpoint_id      uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    grantee_scope_id uuid NOT NULL REFERENCES owner_scopes (id) ON DELETE CASCADE,
    granted_by       uuid REFERENCES humans (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (endpoint_id, grantee_scope_id)
);
CREATE INDEX fanout_grants_grantee_idx ON fanout_grants (grantee_scope_id);
