//! Board sign-in: the facts a password check needs, sessions (start, look up, end) and
//! password changes. Only the SHA-256 of a session token is stored.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::OptionalExtension;
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::Store;
use super::tenancy::{Reach, reach_of};
use crate::db::schema::{board_sessions, humans};
use crate::db::statement::statement;
use crate::domain::ids::HumanId;
use crate::domain::tokens;
use crate::error::Result;

/// Prefix of a Board session token (the `sb_session` cookie's value).
pub const SESSION_TOKEN_PREFIX: &str = "sbs_";

/// What checking a sign-in needs: who the email names and their stored hash (none when
/// the human has no Board password).
#[derive(Clone)]
pub struct LoginFacts {
    /// The human.
    pub human: HumanId,
    /// Their argon2id PHC string, if they have a Board password.
    pub password_hash: Option<String>,
}

impl std::fmt::Debug for LoginFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginFacts").field("human", &self.human).finish_non_exhaustive()
    }
}

/// A started session: the token goes into the cookie once and is never stored.
pub struct NewBoardSession {
    /// The session token (the cookie's value).
    pub token: String,
    /// When the session ends, whatever happens.
    pub expires_at: DateTime<Utc>,
}

/// A live session and who holds it.
#[derive(Debug, Clone)]
pub struct BoardSession {
    /// The human's email.
    pub email: String,
    /// The human's display name (user-chosen text: escape it).
    pub display_name: String,
    /// When the session ends.
    pub expires_at: DateTime<Utc>,
    /// Every scope the human belongs to.
    pub reach: Reach,
}

statement! {
    static LOGIN_FACTS = "SELECT id, password_hash FROM humans WHERE lower(email) = lower($1)";
    static SESSION_BY_TOKEN = "SELECT s.human_id, h.email, h.display_name, s.expires_at \
        FROM board_sessions s JOIN humans h ON h.id = s.human_id \
        WHERE s.token_hash = $1 AND s.expires_at > now()";
}

impl Store {
    /// The human an email names (case-insensitive) and their password hash.
    pub async fn login_facts(&self, email: &str) -> Result<Option<LoginFacts>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
            #[diesel(sql_type = Nullable<Text>)]
            password_hash: Option<String>,
        }
        let mut conn = self.conn().await?;
        let row: Option<Row> = LOGIN_FACTS.query().bind::<Text, _>(email.trim()).one_row(&mut conn).await.optional()?;
        Ok(row.map(|r| LoginFacts { human: HumanId(r.id), password_hash: r.password_hash }))
    }

    /// Starts a session for `human` lasting `ttl`, and forgets their expired ones.
    pub async fn start_board_session(&self, human: HumanId, ttl: chrono::Duration) -> Result<NewBoardSession> {
        let minted = tokens::mint(SESSION_TOKEN_PREFIX);
        let expires_at = Utc::now() + ttl;
        let mut conn = self.conn().await?;
        diesel::delete(board_sessions::table)
            .filter(board_sessions::human_id.eq(human.0))
            .filter(board_sessions::expires_at.le(diesel::dsl::now))
            .execute(&mut conn)
            .await?;
        diesel::insert_into(board_sessions::table)
            .values((
                board_sessions::id.eq(uuid::Uuid::new_v4()),
                board_sessions::human_id.eq(human.0),
                board_sessions::token_hash.eq(minted.hash.as_slice()),
                board_sessions::expires_at.eq(expires_at),
            ))
            .execute(&mut conn)
            .await?;
        Ok(NewBoardSession { token: minted.plaintext, expires_at })
    }

    /// The live (unexpired) session a token names, with its human's reach.
    pub async fn board_session(&self, token: &str) -> Result<Option<BoardSession>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            human_id: uuid::Uuid,
            #[diesel(sql_type = Text)]
            email: String,
            #[diesel(sql_type = Text)]
            display_name: String,
            #[diesel(sql_type = Timestamptz)]
            expires_at: DateTime<Utc>,
        }
        if !token.starts_with(SESSION_TOKEN_PREFIX) || token.len() > 128 {
            return Ok(None);
        }
        let hash = tokens::sha256(token.as_bytes());
        let mut conn = self.conn().await?;
        let row: Option<Row> =
            SESSION_BY_TOKEN.query().bind::<Bytea, _>(hash.as_slice()).one_row(&mut conn).await.optional()?;
        let Some(row) = row else { return Ok(None) };
        let reach = reach_of(&mut conn, HumanId(row.human_id)).await?;
        Ok(Some(BoardSession { email: row.email, display_name: row.display_name, expires_at: row.expires_at, reach }))
    }

    /// Ends the session a token names (sign-out); whether there was one.
    pub async fn end_board_session(&self, token: &str) -> Result<bool> {
        let hash = tokens::sha256(token.as_bytes());
        let mut conn = self.conn().await?;
        let n = diesel::delete(board_sessions::table)
            .filter(board_sessions::token_hash.eq(hash.as_slice()))
            .execute(&mut conn)
            .await?;
        Ok(n > 0)
    }

    /// Deletes every expired session, whoever held it (sessions are otherwise only
    /// forgotten when their human signs in again); returns how many went.
    pub async fn sweep_expired_board_sessions(&self) -> Result<usize> {
        let mut conn = self.conn().await?;
        Ok(diesel::delete(board_sessions::table)
            .filter(board_sessions::expires_at.le(diesel::dsl::now))
            .execute(&mut conn)
            .await?)
    }

    /// Sets a human's Board password (an argon2id PHC string) and ends all their
    /// sessions in the same transaction; returns how many sessions ended.
    pub async fn set_password(&self, human: HumanId, password_hash: &str) -> Result<usize> {
        let mut conn = self.conn().await?;
        let hash = password_hash.to_owned();
        let ended = conn
            .transaction::<_, diesel::result::Error, _>(async move |conn| {
                let updated = diesel::update(humans::table.find(human.0))
                    .set(humans::password_hash.eq(Some(hash)))
                    .execute(conn)
                    .await?;
                if updated == 0 {
                    return Err(diesel::result::Error::NotFound);
                }
                diesel::delete(board_sessions::table.filter(board_sessions::human_id.eq(human.0))).execute(conn).await
            })
            .await?;
        Ok(ended)
    }
}
