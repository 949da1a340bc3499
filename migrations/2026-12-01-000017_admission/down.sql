DROP INDEX IF EXISTS todos_in_flight_idx;
DROP TABLE IF EXISTS queue_deferrals;
DROP TABLE IF EXISTS queue_admission;
