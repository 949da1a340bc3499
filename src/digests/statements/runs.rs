//! Each send time of a digest, decided once across instances: the scheduler commits
//! the send time, its record (sent, skipped and why) and the outbox rows for the
//! digest's sinks in one transaction, conditional on the send time still being the
//! one it read. Two instances may build the same digest; only one commits it, and a
//! crash before the commit leaves the send time due for the next tick.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Int4, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::db::DbConn;
use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, DigestId, DigestRunId, ScopeId};
use crate::error::{Error, Result};
use crate::sinks::rules::content::Message;
use crate::store::Store;

/// Seconds a Cairn publication may take before another instance takes the run over.
pub const PUBLISH_CLAIM_SECONDS: i32 = 120;

/// What happened at one send time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// Waiting for the Cairn call; the sinks are told once it answers.
    Publishing,
    /// Queued for the digest's sinks.
    Sent,
    /// Quiet, and the digest skips quiet ones.
    SkippedQuiet,
    /// Missed while every instance was down, by an hour or more.
    SkippedLate,
}

impl RunOutcome {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Publishing => "publishing",
            RunOutcome::Sent => "sent",
            RunOutcome::SkippedQuiet => "skipped_quiet",
            RunOutcome::SkippedLate => "skipped_late",
        }
    }
}

/// The send time being evaluated, and what came of it.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// The scheduled instant.
    pub send_at: DateTime<Utc>,
    /// Sent, publishing first, or skipped as quiet.
    pub outcome: RunOutcome,
    /// Whether the digest was quiet.
    pub quiet: bool,
    /// Sections that could not be measured.
    pub unavailable: i32,
    /// The digest's title.
    pub title: String,
    /// The digest's full text.
    pub body: String,
    /// What each sink gets, when sent now (not for `Publishing`).
    pub message: Option<Message>,
}

/// One decided send time: the claim condition, the next send time, and what to record.
#[derive(Debug, Clone)]
pub struct SendTime {
    /// The digest.
    pub digest: DigestId,
    /// The send time read (the claim holds only while it is still stored).
    pub due: DateTime<Utc>,
    /// The next send time after now.
    pub next: DateTime<Utc>,
    /// Send times missed by an hour or more, recorded as skipped.
    pub skipped_late: Vec<DateTime<Utc>>,
    /// The send time evaluated, if one was less than an hour late.
    pub evaluated: Option<Evaluated>,
}

/// What committing a send time came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// Another instance (or an edit of the digest) moved the send time first; nothing
    /// was written.
    Lost,
    /// This instance decided it: the evaluated run's id, if one was evaluated (none when
    /// every missed time was recorded skipped, or the schedule was only moved on).
    Decided(Option<DigestRunId>),
}

/// A digest run as shown.
#[derive(Debug, Clone, QueryableByName)]
pub struct RunRow {
    /// The run.
    #[diesel(sql_type = SqlUuid)]
    pub id: DigestRunId,
    /// The scheduled instant.
    #[diesel(sql_type = Timestamptz)]
    pub send_at: DateTime<Utc>,
    /// `publishing`, `sent`, `skipped_quiet` or `skipped_late`.
    #[diesel(sql_type = Text)]
    pub outcome: String,
    /// Whether it was quiet.
    #[diesel(sql_type = Bool)]
    pub quiet: bool,
    /// Sections not measured.
    #[diesel(sql_type = Int4)]
    pub unavailable: i32,
    /// Sinks queued.
    #[diesel(sql_type = Int4)]
    pub sinks_told: i32,
    /// The Cairn artifact, when published.
    #[diesel(sql_type = Nullable<Text>)]
    pub artifact_url: Option<String>,
    /// Why publishing failed, when it did.
    #[diesel(sql_type = Nullable<Text>)]
    pub cairn_error: Option<String>,
}

/// A run whose Cairn publication is to be (re)done.
#[derive(Debug, Clone, QueryableByName)]
pub struct Publication {
    /// The run.
    #[diesel(sql_type = SqlUuid)]
    pub run: DigestRunId,
    /// Its digest.
    #[diesel(sql_type = SqlUuid)]
    pub digest: DigestId,
    /// The digest's scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope: ScopeId,
    /// The connection to publish with (none: it was deleted meanwhile).
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub connection: Option<ConnectionId>,
    /// The artifact's time to live.
    #[diesel(sql_type = Int4)]
    pub ttl_seconds: i32,
    /// The digest's title.
    #[diesel(sql_type = Text)]
    pub title: String,
    /// The full text.
    #[diesel(sql_type = Text)]
    pub body: String,
    /// The scheduled instant.
    #[diesel(sql_type = Timestamptz)]
    pub send_at: DateTime<Utc>,
}

const RUN_COLUMNS: &str = "id, send_at, outcome, quiet, unavailable, sinks_told, artifact_url, cairn_error";

statement! {
    static ADVANCE_DIGEST = "UPDATE digests SET next_send_at = $3, covered_until = COALESCE($4, covered_until) \
        WHERE id = $1 AND next_send_at = $2";
    static INSERT_RUN = "INSERT INTO digest_runs (id, digest_id, send_at, outcome, quiet, body, title) \
        VALUES ($1, $2, $3, 'skipped_late', false, '', '') ON CONFLICT (digest_id, send_at) DO NOTHING";
    static INSERT_UNAVAILABLE_RUN = "INSERT INTO digest_runs (id, digest_id, send_at, outcome, quiet, unavailable, body, title, claimed_until) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
        CASE WHEN $4 = 'publishing' THEN now() + make_interval(secs => $9) END) \
        ON CONFLICT (digest_id, send_at) DO NOTHING";
    static CLAIM_RUNS = "UPDATE digest_runs r SET claimed_until = now() + make_interval(secs => $2) \
        FROM digests d \
        WHERE r.id IN (SELECT id FROM digest_runs WHERE outcome = 'publishing' AND claimed_until < now() \
        ORDER BY claimed_until LIMIT $1 FOR UPDATE SKIP LOCKED) \
        AND d.id = r.digest_id \
        RETURNING r.id AS run, d.id AS digest, d.scope_id AS scope, d.cairn_connection_id AS connection, \
        d.cairn_ttl_seconds AS ttl_seconds, r.title, r.body, r.send_at";
    static MARK_SENT = "UPDATE digest_runs SET outcome = 'sent', claimed_until = NULL, artifact_url = $2, cairn_error = $3 \
        WHERE id = $1 AND outcome = 'publishing' RETURNING digest_id, send_at";
    static RUNS_OF_DIGEST = format!(
        "SELECT {RUN_COLUMNS} FROM digest_runs WHERE digest_id = $1 ORDER BY send_at DESC LIMIT $2"
    );
}

impl Store {
    /// Commits one send time (see the module doc).
    pub async fn commit_digest_send(&self, st: SendTime) -> Result<Committed> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let covered = st.evaluated.as_ref().map(|e| e.send_at);
            let moved = ADVANCE_DIGEST
                .query()
                .bind::<SqlUuid, _>(st.digest)
                .bind::<Timestamptz, _>(st.due)
                .bind::<Timestamptz, _>(st.next)
                .bind::<Nullable<Timestamptz>, _>(covered)
                .execute(conn)
                .await?;
            if moved == 0 {
                return Ok(Committed::Lost);
            }
            for at in &st.skipped_late {
                INSERT_RUN
                    .query()
                    .bind::<SqlUuid, _>(DigestRunId::new())
                    .bind::<SqlUuid, _>(st.digest)
                    .bind::<Timestamptz, _>(*at)
                    .execute(conn)
                    .await?;
            }
            let Some(ev) = st.evaluated else { return Ok(Committed::Decided(None)) };
            let run = DigestRunId::new();
            INSERT_UNAVAILABLE_RUN
                .query()
                .bind::<SqlUuid, _>(run)
                .bind::<SqlUuid, _>(st.digest)
                .bind::<Timestamptz, _>(ev.send_at)
                .bind::<Text, _>(ev.outcome.as_str())
                .bind::<Bool, _>(ev.quiet)
                .bind::<Int4, _>(ev.unavailable)
                .bind::<Text, _>(&ev.body)
                .bind::<Text, _>(&ev.title)
                .bind::<Int4, _>(PUBLISH_CLAIM_SECONDS)
                .execute(conn)
                .await?;
            if let Some(message) = &ev.message {
                tell_sinks(conn, st.digest, run, ev.send_at, message).await?;
            }
            Ok(Committed::Decided(Some(run)))
        })
        .await
    }

    /// Takes over runs whose Cairn publication was claimed and not finished in time (an
    /// instance died between the claim and the answer), at most `limit`.
    pub async fn claim_stuck_publications(&self, limit: i64) -> Result<Vec<Publication>> {
        let mut conn = self.conn().await?;
        Ok(CLAIM_RUNS
            .query()
            .bind::<diesel::sql_types::BigInt, _>(limit)
            .bind::<Int4, _>(PUBLISH_CLAIM_SECONDS)
            .load(&mut conn)
            .await?)
    }

    /// Records a publication's outcome and queues the sinks' message, once: a run no
    /// longer `publishing` (another instance finished it) is left alone. Whether this
    /// call finished it.
    pub async fn finish_publication(
        &self,
        run: DigestRunId,
        artifact_url: Option<&str>,
        cairn_error: Option<&str>,
        message: &Message,
    ) -> Result<bool> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            #[derive(QueryableByName)]
            struct Done {
                #[diesel(sql_type = SqlUuid)]
                digest_id: DigestId,
                #[diesel(sql_type = Timestamptz)]
                send_at: DateTime<Utc>,
            }
            let done: Option<Done> = diesel::OptionalExtension::optional(
                MARK_SENT
                    .query()
                    .bind::<SqlUuid, _>(run)
                    .bind::<Nullable<Text>, _>(artifact_url)
                    .bind::<Nullable<Text>, _>(cairn_error)
                    .one_row::<Done>(conn)
                    .await,
            )?;
            let finished = done.is_some();
            if let Some(d) = done {
                tell_sinks(conn, d.digest_id, run, d.send_at, message).await?;
            }
            Ok(finished)
        })
        .await
    }

    /// The latest runs of `digest`, newest first.
    pub async fn digest_runs(&self, digest: DigestId, limit: i64) -> Result<Vec<RunRow>> {
        let mut conn = self.conn().await?;
        Ok(RUNS_OF_DIGEST
            .query()
            .bind::<SqlUuid, _>(digest)
            .bind::<diesel::sql_types::BigInt, _>(limit)
            .load(&mut conn)
            .await?)
    }
}

statement! {
    static TELL_SINKS = "INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, facts) \
        SELECT s.id, s.scope_id, 'digest', 'low', 'digest:' || d.id || ':' || $2, $3 \
        FROM digests d JOIN sinks s ON s.id = ANY (d.sink_ids) AND s.scope_id = d.scope_id AND s.enabled \
        WHERE d.id = $1 \
        ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held') DO NOTHING";
    static SET_SINKS_TOLD = "UPDATE digest_runs SET sinks_told = $2 WHERE id = $1";
}

/// Queues `message` for every enabled sink of the digest that is still its scope's, and
/// records how many. The dedup key (digest and send time) keeps a repeat from sending
/// twice while the first is still open.
async fn tell_sinks(
    conn: &mut DbConn,
    digest: DigestId,
    run: DigestRunId,
    send_at: DateTime<Utc>,
    message: &Message,
) -> std::result::Result<(), Error> {
    let facts = serde_json::json!({ "message": message, "run": run.to_string() });
    let told = TELL_SINKS
        .query()
        .bind::<SqlUuid, _>(digest)
        .bind::<Text, _>(send_at.to_rfc3339())
        .bind::<Jsonb, _>(facts)
        .execute(conn)
        .await?;
    SET_SINKS_TOLD
        .query()
        .bind::<SqlUuid, _>(run)
        .bind::<Int4, _>(i32::try_from(told).unwrap_or(i32::MAX))
        .execute(conn)
        .await?;
    Ok(())
}
