-- An event is a record of what arrived: its webhook and endpoint columns say where it
-- arrived, and must keep saying so after that webhook or endpoint is gone (ON DELETE
-- SET NULL would erase exactly that). The foreign keys also cost every delivery two
-- checks that key-share-lock the same hot webhook and endpoint rows from every
-- concurrent delivery (measured on intake's benchmark). The owner scope keeps its
-- key: deleting an owner deletes their events.
ALTER TABLE events DROP CONSTRAINT events_webhook_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_endpoint_id_fkey;
