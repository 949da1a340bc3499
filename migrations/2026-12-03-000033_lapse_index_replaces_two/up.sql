-- `todos_lapse_idx` (previous migration) serves both reapers. Dropping an index locks
-- todos (ACCESS EXCLUSIVE) for a moment: give up rather than queue every claim behind a
-- long transaction.
SET LOCAL lock_timeout = '5s';
DROP INDEX IF EXISTS todos_lease_reap_idx, todos_interrupt_reap_idx;
