DROP TRIGGER todo_attempts_failed_tally ON todo_attempts;
DROP FUNCTION switchboard_queue_failed_attempts();
DROP TABLE queue_census_runs;
DROP TABLE queue_failed_attempts;
DROP TABLE queue_minutes;
DROP TABLE queue_census;
