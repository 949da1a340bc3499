DROP INDEX IF EXISTS todos_in_flight_idx;
