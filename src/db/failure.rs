//! What a failed statement says about its connection, for the one error mapping in
//! [`crate::error`]: the connection is gone (the server restarted, or an operator
//! terminated it), or its kept-prepared statements no longer match the schema (a newer
//! release's migration changed a table under this one). Both answer 503: the request
//! did not happen and a retry succeeds on another connection.
//!
//! diesel-async 0.9 does not keep the SQLSTATE: its error conversion names eight codes
//! (unique violation, …) and reports every other one as `Unknown`, and diesel's
//! `DatabaseErrorInformation` has no code accessor. Errors without a SQLSTATE (I/O,
//! "connection closed": class 08 as the client sees it) arrive as `UnableToSendCommand`;
//! the server's FATAL terminations (57P01 admin shutdown, 57P02 crash shutdown, 57P03
//! cannot connect now, 57P05 idle session, 25P03 idle in transaction) are recognised by
//! their message, which PostgreSQL sends in English unless `lc_messages` is changed.
//! Connection-time failures come through the pool and are already `unavailable`.

use crate::db::one_row::OneRow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use diesel::result::{DatabaseErrorKind, Error};

use super::statement::statement;
use crate::error::Error as ServiceError;

/// How a database error bears on the connection that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The connection is closed or its session ended: the pool discards it.
    ConnectionLost,
    /// A kept-prepared statement's result type changed under it (SQLSTATE 0A000,
    /// "cached plan must not change result type"): every connection prepared before
    /// now is discarded at its next checkout (see [`stale`]).
    SchemaChanged,
    /// The statement was given text PostgreSQL cannot hold: NUL in a `text` parameter
    /// (22021, "invalid byte sequence for encoding …: 0x00") or `\u0000` in `jsonb`
    /// (22P05, "unsupported Unicode escape sequence"). Only a request's input can carry
    /// it (nothing stored can), so it is the caller's error, not the server's: the one
    /// guard behind the extractors' own refusals, for any text that reaches a statement.
    Nul,
    /// Anything else: not about the connection.
    Other,
}

/// Classifies `e`.
pub fn classify(e: &Error) -> Failure {
    match e {
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => {
            Failure::ConnectionLost
        }
        // A transaction whose ROLLBACK failed: the connection's state is unknown.
        Error::BrokenTransactionManager => Failure::ConnectionLost,
        Error::RollbackErrorOnCommit { commit_error, rollback_error } => {
            match (classify(commit_error), classify(rollback_error)) {
                (Failure::Other, other) | (other, _) => other,
            }
        }
        Error::DatabaseError(_, info) => classify_message(info.message()),
        _ => Failure::Other,
    }
}

fn classify_message(message: &str) -> Failure {
    // Every server message that ends the session starts one of these ways (57P01,
    // 57P02, 57P05, 25P03, and 57P04's "… conflict with recovery"; 57P03 for the rest).
    if message.starts_with("terminating connection") || message.starts_with("the database system is") {
        Failure::ConnectionLost
    } else if message == "cached plan must not change result type" {
        Failure::SchemaChanged
    } else if (message.starts_with("invalid byte sequence for encoding") && message.ends_with(": 0x00"))
        || message == "unsupported Unicode escape sequence"
    {
        Failure::Nul
    } else {
        Failure::Other
    }
}

/// PostgreSQL's English message for `SELECT 1/0`, with which start-up asks the server
/// which language it answers in when `lc_messages` does not say.
const ENGLISH_PROBE_MESSAGE: &str = "division by zero";

/// Whether the server writes its messages in English (its `lc_messages`), which
/// [`classify`] needs to tell a lost session or a changed prepared statement from other
/// errors. The setting answers when it names a locale; only an empty one (the server's
/// environment decides) takes a failing statement, which the server logs as an ERROR.
/// `None` when neither could tell.
pub async fn messages_in_english(conn: &mut diesel_async::AsyncPgConnection) -> Option<bool> {
    #[derive(diesel::QueryableByName)]
    struct Setting {
        #[diesel(sql_type = diesel::sql_types::Text)]
        lc_messages: String,
    }
    let setting: Setting = LC_MESSAGES.query().one_row(conn).await.ok()?;
    match english_locale(&setting.lc_messages) {
        Some(english) => Some(english),
        None => errors_in_english(conn).await,
    }
}

/// Whether an error the server raises now comes in English: `SELECT 1/0`, which the
/// server logs as an ERROR (the alias says why it was sent). `None` when it did not fail
/// with a server message.
pub async fn errors_in_english(conn: &mut diesel_async::AsyncPgConnection) -> Option<bool> {
    use diesel_async::RunQueryDsl;
    match LANGUAGE_PROBE.query().execute(conn).await {
        Err(Error::DatabaseError(_, info)) => Some(info.message() == ENGLISH_PROBE_MESSAGE),
        _ => None,
    }
}

statement! {
    /// The server's `lc_messages`.
    static LC_MESSAGES = "SELECT current_setting('lc_messages') AS lc_messages";
    /// A statement that fails with a server message (division by zero), whose language
    /// tells the server's; the alias says why it was sent.
    static LANGUAGE_PROBE = "SELECT 1/0 AS switchboard_language_probe";
}

/// Whether the locale `lc_messages` names writes English (PostgreSQL's untranslated
/// messages: `C`, `POSIX`, any `en…`, Windows' `English…`); `None` for an empty setting, which leaves it to
/// the server's environment.
fn english_locale(lc_messages: &str) -> Option<bool> {
    let name = lc_messages.trim();
    if name.is_empty() {
        return None;
    }
    let language = name.split(['.', '_', '@']).next().unwrap_or(name);
    Some(matches!(language, "C" | "POSIX") || ["en", "english"].iter().any(|e| language.eq_ignore_ascii_case(e)))
}

/// Nanoseconds after [`anchor`] at which a schema change was last seen; 0 = never.
static SCHEMA_CHANGED_AT: AtomicU64 = AtomicU64::new(0);

fn anchor() -> Instant {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    *ANCHOR.get_or_init(Instant::now)
}

/// Records that a statement prepared earlier no longer matches the schema: connections
/// created before now are [`stale`].
pub fn note_schema_change() {
    let at = anchor().elapsed().as_nanos().max(1) as u64;
    SCHEMA_CHANGED_AT.fetch_max(at, Ordering::Relaxed);
}

/// Whether a connection created at `created` may hold statements prepared against an
/// older schema (the pool checks this at each checkout: one atomic load).
pub fn stale(created: Instant) -> bool {
    let at = SCHEMA_CHANGED_AT.load(Ordering::Relaxed);
    at != 0 && created.checked_duration_since(anchor()).is_none_or(|c| (c.as_nanos() as u64) < at)
}

// The one place a database failure becomes the service's error: the error type itself
// stays free of the database layer.
impl From<diesel::result::Error> for ServiceError {
    #[track_caller]
    fn from(e: diesel::result::Error) -> Self {
        match e {
            diesel::result::Error::NotFound => ServiceError::NotFound,
            // The request did not happen and a retry on another connection succeeds.
            other => match classify(&other) {
                Failure::ConnectionLost => ServiceError::Unavailable(format!("database connection lost: {other}")),
                Failure::SchemaChanged => {
                    note_schema_change();
                    ServiceError::Unavailable(format!("database schema changed under a prepared statement: {other}"))
                }
                Failure::Nul => {
                    ServiceError::InvalidArgument("text may not contain NUL (\\u0000, %00) characters".into())
                }
                Failure::Other => ServiceError::internal_from("database", other),
            },
        }
    }
}

impl From<deadpool::managed::PoolError<diesel_async::pooled_connection::PoolError>> for ServiceError {
    fn from(e: deadpool::managed::PoolError<diesel_async::pooled_connection::PoolError>) -> Self {
        ServiceError::Unavailable(format!("database unavailable: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_locale_says_whether_messages_are_english_and_an_empty_one_does_not() {
        for english in ["C", "POSIX", "C.UTF-8", "en_US.UTF-8", "en_GB", "English_United States.1252", "en"] {
            assert_eq!(english_locale(english), Some(true), "{english}");
        }
        for other in ["de_DE.UTF-8", "fr_FR", "ja_JP.eucJP", "pt_BR@latin"] {
            assert_eq!(english_locale(other), Some(false), "{other}");
        }
        assert_eq!(english_locale(""), None);
    }

    fn db(kind: DatabaseErrorKind, message: &str) -> Error {
        Error::DatabaseError(kind, Box::new(message.to_owned()))
    }

    #[test]
    fn server_terminations_and_closed_connections_are_connection_failures() {
        for message in [
            "terminating connection due to administrator command",
            "terminating connection because of crash of another server process",
            "terminating connection due to idle-session timeout",
            "the database system is shutting down",
            "the database system is starting up",
        ] {
            assert_eq!(classify(&db(DatabaseErrorKind::Unknown, message)), Failure::ConnectionLost, "{message}");
        }
        assert_eq!(classify(&db(DatabaseErrorKind::UnableToSendCommand, "connection closed")), Failure::ConnectionLost);
        assert_eq!(classify(&Error::BrokenTransactionManager), Failure::ConnectionLost);
        let commit = Error::RollbackErrorOnCommit {
            commit_error: Box::new(db(
                DatabaseErrorKind::Unknown,
                "terminating connection due to administrator command",
            )),
            rollback_error: Box::new(db(DatabaseErrorKind::UnableToSendCommand, "connection closed")),
        };
        assert_eq!(classify(&commit), Failure::ConnectionLost);
    }

    #[test]
    fn ordinary_statement_errors_are_not_connection_failures() {
        assert_eq!(classify(&db(DatabaseErrorKind::Unknown, "deadlock detected")), Failure::Other);
        assert_eq!(classify(&db(DatabaseErrorKind::UniqueViolation, "duplicate key")), Failure::Other);
        assert_eq!(classify(&Error::NotFound), Failure::Other);
        let changed = db(DatabaseErrorKind::Unknown, "cached plan must not change result type");
        assert_eq!(classify(&changed), Failure::SchemaChanged);
    }

    #[test]
    fn nul_in_text_or_jsonb_is_the_inputs_fault() {
        for message in ["invalid byte sequence for encoding \"UTF8\": 0x00", "unsupported Unicode escape sequence"] {
            assert_eq!(classify(&db(DatabaseErrorKind::Unknown, message)), Failure::Nul, "{message}");
        }
        let other_bytes = db(DatabaseErrorKind::Unknown, "invalid byte sequence for encoding \"UTF8\": 0xff");
        assert_eq!(classify(&other_bytes), Failure::Other);
    }

    #[test]
    fn connections_created_before_a_schema_change_are_stale_and_later_ones_are_not() {
        let before = Instant::now();
        note_schema_change();
        let after = Instant::now();
        assert!(stale(before));
        assert!(!stale(after + std::time::Duration::from_millis(1)));
    }
}
