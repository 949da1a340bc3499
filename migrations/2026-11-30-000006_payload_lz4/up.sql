-- Delivery bodies and todo payloads are typically a few KiB: just past the size at
-- which PostgreSQL compresses a row. lz4 compresses them several times faster than
-- the default pglz, which showed in intake's profile. A server built without lz4
-- keeps pglz (the columns work the same either way).
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN payload SET COMPRESSION lz4;
    ALTER TABLE events ALTER COLUMN headers SET COMPRESSION lz4;
    ALTER TABLE todos ALTER COLUMN payload SET COMPRESSION lz4;
    ALTER TABLE todos ALTER COLUMN result SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available: payloads keep the default compression';
END
$$;
