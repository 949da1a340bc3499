-- The probe's queue: :done completed and :pending pending todos of one endpoint on the
-- queue `work` (as the REST benchmarks seed it), each with a 200-byte payload.
-- Ids are time-ordered UUIDv7 of each todo's creation time, as the product makes them
-- (`TodoId::new`; PostgreSQL 15 has no uuidv7()).
-- psql -v ep=<endpoint uuid> -v done=N -v pending=N
DELETE FROM todo_attempts;
DELETE FROM todos;
INSERT INTO todos (id, endpoint_id, scope_id, queue, source, title, payload, payload_size, state, attempt,
                   max_attempts, attempts_total, created_at, updated_at, completed_at)
SELECT (lpad(to_hex((extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7'
        || substr(md5(random()::text), 1, 3) || to_hex(8 + floor(random() * 4)::int)
        || substr(md5(random()::text), 1, 15))::uuid, e.id, e.scope_id, 'work', 'agent', 'bench',
       jsonb_build_object('seq', g, 'body', repeat('x', 200)), 220, 'done', 1, 5, 1,
       ts, now(), now()
FROM endpoints e, generate_series(1, :done) g,
     LATERAL (SELECT now() - interval '1 day' + g * interval '1 microsecond' AS ts) t
WHERE e.id = :'ep';
INSERT INTO todos (id, endpoint_id, scope_id, queue, source, title, payload, payload_size, state, attempt,
                   max_attempts, attempts_total, created_at, updated_at)
SELECT (lpad(to_hex((extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7'
        || substr(md5(random()::text), 1, 3) || to_hex(8 + floor(random() * 4)::int)
        || substr(md5(random()::text), 1, 15))::uuid, e.id, e.scope_id, 'work', 'agent', 'bench',
       jsonb_build_object('seq', g, 'body', repeat('x', 200)), 220, 'pending', 0, 5, 0,
       ts, now()
FROM endpoints e, generate_series(1, :pending) g,
     LATERAL (SELECT now() + g * interval '1 microsecond' AS ts) t
WHERE e.id = :'ep';
VACUUM ANALYZE todos;
VACUUM ANALYZE todo_attempts;
