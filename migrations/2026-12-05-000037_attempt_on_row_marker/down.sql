-- The marker only spares completions a statement; without it every completion closes in
-- place whatever history row an earlier release opened, as before.
SET LOCAL lock_timeout = '5s';

ALTER TABLE todos DROP COLUMN attempt_on_row;
