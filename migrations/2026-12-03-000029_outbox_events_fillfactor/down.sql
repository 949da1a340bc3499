ALTER TABLE outbox_events RESET (fillfactor);
