DROP INDEX IF EXISTS todos_lapse_idx;
