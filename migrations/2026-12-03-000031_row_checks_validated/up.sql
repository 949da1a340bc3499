-- Proves every stored row meets the rules migration `row_checks_in_one` added NOT VALID.
-- VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE: claims, completions and intake go on
-- writing while the tables are read.
ALTER TABLE todos VALIDATE CONSTRAINT todos_valid;
ALTER TABLE todo_attempts VALIDATE CONSTRAINT todo_attempts_valid;
