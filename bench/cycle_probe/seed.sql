-- The probe's queue: :done completed and :pending pending todos of one endpoint on the
-- queue `work` (as the REST benchmarks seed it), each with a 200-byte payload.
-- psql -v ep=<endpoint uuid> -v done=N -v pending=N
DELETE FROM todo_attempts;
DELETE FROM todos;
INSERT INTO todos (id, endpoint_id, scope_id, queue, source, title, payload, payload_size, state, attempt,
                   max_attempts, attempts_total, created_at, updated_at, completed_at)
SELECT gen_random_uuid(), e.id, e.scope_id, 'work', 'agent', 'bench',
       jsonb_build_object('seq', g, 'body', repeat('x', 200)), 220, 'done', 1, 5, 1,
       now() - interval '1 day' + g * interval '1 microsecond', now(), now()
FROM endpoints e, generate_series(1, :done) g WHERE e.id = :'ep';
INSERT INTO todos (id, endpoint_id, scope_id, queue, source, title, payload, payload_size, state, attempt,
                   max_attempts, attempts_total, created_at, updated_at)
SELECT gen_random_uuid(), e.id, e.scope_id, 'work', 'agent', 'bench',
       jsonb_build_object('seq', g, 'body', repeat('x', 200)), 220, 'pending', 0, 5, 0,
       now() + g * interval '1 microsecond', now()
FROM endpoints e, generate_series(1, :pending) g WHERE e.id = :'ep';
VACUUM ANALYZE todos;
VACUUM ANALYZE todo_attempts;
