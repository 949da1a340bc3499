-- Board sign-in sessions. Only the SHA-256 of the session token is stored, so a
-- database leak does not leak a working cookie. Expiry is absolute (set at sign-in);
-- sign-out and a password reset delete rows, so the server can end a session at once.
-- The CSRF token is derived from the session token (HMAC), so nothing about it is
-- stored here either.
CREATE TABLE board_sessions (
    id         uuid PRIMARY KEY,
    human_id   uuid NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX board_sessions_human_idx ON board_sessions (human_id);
