//! Queue digests, for humans: schedule one (in the caller's scope or a team they
//! administer), list, show with its recent send times, replace, delete, and preview
//! (measured and written now, sent nowhere). Every sink and the Cairn connection must
//! be the digest's scope's (`reference_out_of_scope`); a schedule that does not parse
//! is refused naming the offending token (`schedule: hour 25 out of range`).

pub mod compose;

use chrono::{DateTime, Utc};

use crate::digests::clients::cairn;
use crate::digests::rules::schedule::Schedule;
use crate::digests::service::compose::{Composed, compose};
use crate::digests::statements::{DigestRow, DigestSpec, RunRow};
use crate::domain::ids::{ConnectionId, DigestId, SinkId};
use crate::domain::text::valid_queue_name;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::owners::scope_to_create_in;
use crate::service::permissions::{Action, Place, check};
use crate::service::principal::Principal;
use crate::sinks::service::connections::checked_name;
use crate::store::tenancy::Reach;

/// Default of `age_threshold_seconds`: an hour.
pub const DEFAULT_AGE_THRESHOLD_SECONDS: i32 = 3_600;

/// Send times shown with a digest.
pub const RUNS_SHOWN: i64 = 10;

/// What a digest is to be.
#[derive(Debug, Clone, Default)]
pub struct DigestInput {
    /// 1–100 characters, unique in the scope.
    pub name: String,
    /// The schedule (SPEC 11 grammar).
    pub schedule: String,
    /// Covered queues (empty: all).
    pub queues: Vec<String>,
    /// Its sinks (at most 10; at least one unless it publishes to Cairn).
    pub sink_ids: Vec<SinkId>,
    /// Default true.
    pub skip_when_quiet: Option<bool>,
    /// Default 3600; 60–604 800.
    pub age_threshold_seconds: Option<i32>,
    /// A `cairn` connection of the same scope.
    pub cairn_connection_id: Option<ConnectionId>,
    /// Default 7 days; at most 30.
    pub cairn_ttl_seconds: Option<i32>,
    /// `team:T` or an email the caller administers (create only).
    pub owner: Option<String>,
}

/// Checks `input` and turns it into what the store keeps, with the first send time
/// after `now`. Nothing is stored when anything is refused.
fn spec(input: DigestInput, now: DateTime<Utc>) -> Result<DigestSpec> {
    let name = checked_name(&input.name)?;
    let schedule = Schedule::parse(&input.schedule).map_err(|e| Error::invalid(e.field(), e.reason()))?;
    let mut queues = input.queues;
    queues.sort();
    queues.dedup();
    if queues.len() > 64 {
        return Err(Error::invalid("queues", "at most 64"));
    }
    if let Some(q) = queues.iter().find(|q| !valid_queue_name(q)) {
        let shown: String = q.chars().filter(|c| !c.is_control()).take(64).collect();
        return Err(Error::invalid("queues", format!("{shown:?} is not a queue name")));
    }
    let mut sink_ids = input.sink_ids;
    sink_ids.sort();
    sink_ids.dedup();
    if sink_ids.len() > 10 {
        return Err(Error::invalid("sink_ids", "at most 10"));
    }
    if sink_ids.is_empty() && input.cairn_connection_id.is_none() {
        return Err(Error::invalid("sink_ids", "name at least one sink (or a cairn_connection_id to publish to)"));
    }
    let age = input.age_threshold_seconds.unwrap_or(DEFAULT_AGE_THRESHOLD_SECONDS);
    if !(60..=604_800).contains(&age) {
        return Err(Error::invalid("age_threshold_seconds", "must be between 60 and 604800"));
    }
    let ttl = input.cairn_ttl_seconds.unwrap_or(cairn::DEFAULT_TTL_SECONDS);
    if !(cairn::MIN_TTL_SECONDS..=cairn::MAX_TTL_SECONDS).contains(&ttl) {
        return Err(Error::invalid(
            "cairn_ttl_seconds",
            format!("must be between {} and {}", cairn::MIN_TTL_SECONDS, cairn::MAX_TTL_SECONDS),
        ));
    }
    Ok(DigestSpec {
        name,
        next_send_at: schedule.next_after(now),
        schedule: schedule.to_string(),
        queues,
        sink_ids,
        skip_when_quiet: input.skip_when_quiet.unwrap_or(true),
        age_threshold_seconds: age,
        cairn_connection_id: input.cairn_connection_id,
        cairn_ttl_seconds: ttl,
    })
}

/// Schedules a digest in the caller's scope (or a team they administer).
pub async fn create(s: &Services, who: &Reach, input: DigestInput) -> Result<DigestRow> {
    let owner = input.owner.clone();
    let spec = spec(input, Utc::now())?;
    let scope = scope_to_create_in(s, who, owner.as_deref(), Action::CreateDigest).await?;
    s.store.create_digest(scope, spec, who.human).await
}

/// Every digest in the caller's scopes.
pub async fn list(s: &Services, who: &Reach) -> Result<Vec<DigestRow>> {
    check(Action::ListDigests, Principal::Human(who), None)?;
    s.store.list_digests(&who.scope_ids()).await
}

/// A digest the caller may act on with `action` (404 outside their scopes, 403 for a
/// member where the action takes an admin).
async fn digest_for(s: &Services, who: &Reach, action: Action, id: DigestId) -> Result<DigestRow> {
    let d = s.store.digest_in(&who.scope_ids(), id).await?;
    check(action, Principal::Human(who), Some(Place::scope(d.scope_id)))?;
    Ok(d)
}

/// One digest with its latest send times (newest first).
pub async fn show(s: &Services, who: &Reach, id: DigestId) -> Result<(DigestRow, Vec<RunRow>)> {
    let d = digest_for(s, who, Action::ShowDigest, id).await?;
    let runs = s.store.digest_runs(d.id, RUNS_SHOWN).await?;
    Ok((d, runs))
}

/// Replaces a digest, for an admin of its scope; its next send time is recomputed from
/// the new schedule, what it already covered is kept.
pub async fn replace(s: &Services, who: &Reach, id: DigestId, input: DigestInput) -> Result<DigestRow> {
    let spec = spec(input, Utc::now())?;
    let d = digest_for(s, who, Action::UpdateDigest, id).await?;
    s.store.replace_digest(d.scope_id, id, spec).await
}

/// Deletes a digest and its history, for an admin of its scope.
pub async fn delete(s: &Services, who: &Reach, id: DigestId) -> Result<()> {
    let d = digest_for(s, who, Action::DeleteDigest, id).await?;
    s.store.delete_digest(d.scope_id, id).await
}

/// What the digest would say if it were sent now; sends nothing, records nothing.
pub async fn preview(s: &Services, who: &Reach, id: DigestId) -> Result<Composed> {
    let d = digest_for(s, who, Action::PreviewDigest, id).await?;
    compose(&s.store, &d, &s.digests, Utc::now()).await
}
