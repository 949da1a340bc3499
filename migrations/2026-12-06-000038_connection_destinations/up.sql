-- Connections bound to their destination (issue 37, SPEC section 13): a gotify or apprise
-- connection holds where its secret may be sent, and a sink takes its destination from
-- its connection, so nobody who can only pair a sink with a connection (an agent with
-- the `notifications` grant, another admin of the team) can send a secret elsewhere.
--
-- `bound`: true once this release has bound the connection to `base_url` (every new
-- connection is created bound); false when the application could not bind an existing
-- one (its sinks used several destinations or none, an agent created or changed one of
-- them, or their history cannot tell): its sinks' messages are held until an admin
-- rotates it with a destination. Null: written by an earlier release and not yet looked
-- at. Existing rows are bound by the application, not here: the rules forbid a backfill
-- in a migration, and the fingerprints need the master key.
--
-- `fingerprint_keyed` / `secret_fingerprint_keyed`: the fingerprint is an HMAC under a
-- key derived from the master key (false: an earlier release's unsalted SHA-256 prefix,
-- recomputed by the application).
--
-- `changed_by_agent`: who last wrote a sink's destination or connection (true: an agent
-- through the `notifications` verbs; false: a human). Null: an earlier release wrote it,
-- which did not record it.
--
-- `notify_hooks.created_by_agent`: whether an agent created the hook (through
-- `notify_hooks`); only such a hook may an agent rotate or delete, since a rotation answers
-- the new signing secret. Null: an earlier release's, which did not record it (agents
-- may list it, not change it).
--
-- Nullable or with a constant default: catalogue changes only, brief ACCESS EXCLUSIVE.
-- The previous release reads none of these and keeps working (it still pairs freely:
-- the protection holds once every instance runs this release).
SET LOCAL lock_timeout = '5s';

ALTER TABLE connections ADD COLUMN bound boolean;
ALTER TABLE connections ADD COLUMN fingerprint_keyed boolean NOT NULL DEFAULT false;
ALTER TABLE webhooks ADD COLUMN secret_fingerprint_keyed boolean NOT NULL DEFAULT false;
ALTER TABLE sinks ADD COLUMN changed_by_agent boolean;
ALTER TABLE notify_hooks ADD COLUMN created_by_agent boolean;
