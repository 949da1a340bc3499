SET LOCAL lock_timeout = '5s';
ALTER TABLE todos ADD CONSTRAINT todos_claimed_by_fkey
    FOREIGN KEY (claimed_by) REFERENCES endpoints(id) ON DELETE SET NULL;
ALTER TABLE todo_attempts ADD CONSTRAINT todo_attempts_claimer_endpoint_id_fkey
    FOREIGN KEY (claimer_endpoint_id) REFERENCES endpoints(id) ON DELETE SET NULL;
