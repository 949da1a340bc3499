-- The Board's Todos view: every pill's list and count, and the dead-letter chart, read
-- owner-wide (every scope the signed-in human belongs to) on indexes, never by a
-- sequential scan over todos. Quarantine has its own page and is in none of them.

-- Pending, Claimed, Done, and All (merged per state, newest first); the pill counts
-- are capped index-only scans of it.
CREATE INDEX todos_board_state_idx ON todos (scope_id, state, created_at DESC, id DESC)
    WHERE queue <> 'quarantine';
-- Failed with a retry scheduled: small, and the dead letters (also `failed`) would
-- otherwise sit in the way of its list and count.
CREATE INDEX todos_board_retrying_idx ON todos (scope_id, created_at DESC, id DESC)
    WHERE state = 'failed' AND next_retry_at IS NOT NULL AND queue <> 'quarantine';
-- The dead-letter listing, now carrying the queue so that the per-day chart reads the
-- index alone.
DROP INDEX todos_dead_letters_idx;
CREATE INDEX todos_dead_letters_idx ON todos (scope_id, dead_lettered_at DESC, id DESC) INCLUDE (queue)
    WHERE state = 'failed' AND next_retry_at IS NULL AND queue <> 'quarantine';

-- Searching the dead letters by substring: a trigram index over the searched fields,
-- joined as the store's search expression joins them (see store/dead_letters.rs).
-- pg_trgm ships in PostgreSQL's contrib, which a plain install may lack, and creating
-- an extension may need a privilege the service's role lacks: then the search works
-- the same and scans the scope's dead letters instead.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        RAISE NOTICE 'pg_trgm is not available: the dead-letter search runs without its index';
        RETURN;
    END IF;
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX todos_dead_letters_search_idx ON todos
        USING gin ((coalesce(source, '') || ' ' || coalesce(kind, '') || ' ' || queue || ' ' || title) gin_trgm_ops)
        WHERE state = 'failed' AND next_retry_at IS NULL AND queue <> 'quarantine';
EXCEPTION WHEN insufficient_privilege OR undefined_file OR undefined_object OR feature_not_supported THEN
    RAISE NOTICE 'pg_trgm could not be used (%): the dead-letter search runs without its index', SQLERRM;
END
$$;
