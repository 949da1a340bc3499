DROP INDEX IF EXISTS todos_retention_idx;
