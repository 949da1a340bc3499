//! Board sessions: sign-in with a password (argon2id, with a dummy hash for unknown
//! emails so that timing does not tell which accounts exist), who a session cookie
//! belongs to, and sign-out. The Board sets the cookies and throttles attempts.

use super::Services;
use crate::domain::ids::HumanId;
use crate::domain::passwords::verify_password;
use crate::error::{Error, Result};
use crate::store::board_sessions::{BoardSession, NewBoardSession};

/// How long a session lasts from sign-in, whatever the human does (absolute, not idle).
pub const SESSION_TTL: chrono::Duration = chrono::Duration::hours(12);

/// Checks `email` and `password`; on success starts a session (its token goes into
/// the cookie, once). `None`: wrong email or password, without saying which.
pub async fn sign_in(s: &Services, email: &str, password: String) -> Result<Option<(HumanId, NewBoardSession)>> {
    // PostgreSQL text cannot hold NUL, and no stored email is longer than 320 characters:
    // such an email is unknown without asking, and still takes the dummy-hash path.
    let facts =
        if email.contains('\0') || email.chars().count() > 320 { None } else { s.store.login_facts(email).await? };
    let stored = facts.as_ref().and_then(|f| f.password_hash.clone());
    // Hashing takes tens of milliseconds of CPU: off the request's thread.
    let verified = tokio::task::spawn_blocking(move || verify_password(stored.as_deref(), &password))
        .await
        .map_err(|e| Error::internal_from("password check", e))?;
    match facts.filter(|_| verified) {
        Some(facts) => Ok(Some((facts.human, s.store.start_board_session(facts.human, SESSION_TTL).await?))),
        None => Ok(None),
    }
}

/// The live session a cookie's token names, with the human's scopes; none when it
/// has ended or expired.
pub async fn session(s: &Services, token: &str) -> Result<Option<BoardSession>> {
    s.store.board_session(token).await
}

/// Ends the session on the server.
pub async fn sign_out(s: &Services, token: &str) -> Result<()> {
    s.store.end_board_session(token).await.map(drop)
}
