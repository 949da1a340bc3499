DROP INDEX IF EXISTS todos_dead_letters_search_idx;
-- pg_trgm stays: other objects may use it, and it costs nothing unused.
DROP INDEX todos_dead_letters_idx;
CREATE INDEX todos_dead_letters_idx ON todos (scope_id, dead_lettered_at DESC, id DESC)
    WHERE state = 'failed' AND next_retry_at IS NULL AND queue <> 'quarantine';
DROP INDEX todos_board_retrying_idx;
DROP INDEX todos_board_state_idx;
