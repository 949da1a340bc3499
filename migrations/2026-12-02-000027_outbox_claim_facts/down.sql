DROP FUNCTION IF EXISTS switchboard_claim_outbox_records(integer, integer);
