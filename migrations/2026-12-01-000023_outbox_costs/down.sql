DROP FUNCTION IF EXISTS switchboard_claim_outbox(integer, integer, uuid[]);
ALTER TABLE outbox RESET (fillfactor);
UPDATE outbox o SET sink_id = NULL WHERE sink_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sinks k WHERE k.id = o.sink_id);
DELETE FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM owner_scopes s WHERE s.id = o.scope_id);
ALTER TABLE outbox ADD CONSTRAINT outbox_sink_id_fkey FOREIGN KEY (sink_id) REFERENCES sinks (id) ON DELETE SET NULL;
ALTER TABLE outbox ADD CONSTRAINT outbox_scope_id_fkey FOREIGN KEY (scope_id) REFERENCES owner_scopes (id) ON DELETE CASCADE;
