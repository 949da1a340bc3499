SET LOCAL lock_timeout = '5s';
CREATE INDEX IF NOT EXISTS todos_lease_reap_idx ON todos (lease_expires_at) WHERE state = 'claimed';
CREATE INDEX IF NOT EXISTS todos_interrupt_reap_idx ON todos (interrupt_expires_at)
    WHERE state IN ('input_required', 'auth_required');
