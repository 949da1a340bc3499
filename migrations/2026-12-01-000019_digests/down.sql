DROP TABLE IF EXISTS doorbell_rings;
DROP INDEX IF EXISTS outbox_undeliverable_idx;
DROP TABLE IF EXISTS digest_runs;
DROP TABLE IF EXISTS digests;
