-- Nothing to undo: a validated constraint is dropped by the previous migration's down.
SELECT 1;
