//! Wake-up notices for agents waiting on `claim-next` (long-poll): sent after the commit
//! that made work claimable, on the channel every instance's claim listener hears
//! (`service::long_poll`). What a payload says is `domain::wakeups`.
//!
//! Why the service sends them after commit rather than a trigger inside the writing
//! transaction: a transaction that NOTIFYs takes PostgreSQL's one notification lock at
//! commit and holds it until its commit record is flushed, so every creating transaction
//! (intake, agent creates) would commit one at a time (migration `outbox_wake_when_idle`
//! measured that cost for dead letters). A notice-only transaction writes no WAL of its
//! own, so its commit waits for no flush and holds that lock for microseconds; and one
//! notice carries every arrival summed since the last.

use diesel::sql_types::{Array, Text};
use diesel_async::RunQueryDsl;

use super::Store;
use crate::db::statement::statement;
use crate::error::Result;

/// The channel the notices go out on.
pub const CLAIMS_CHANNEL: &str = crate::db::channels::CLAIMS.name();

statement! {
    static SEND_NOTICES = "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p";
}

impl Store {
    /// Sends each payload as one notice on [`CLAIMS_CHANNEL`], in one statement (one
    /// transaction).
    pub async fn send_claim_notices(&self, payloads: &[String]) -> Result<()> {
        let mut conn = self.conn().await?;
        SEND_NOTICES
            .query()
            .bind::<Text, _>(CLAIMS_CHANNEL)
            .bind::<Array<Text>, _>(payloads)
            .execute(&mut conn)
            .await?;
        Ok(())
    }
}
