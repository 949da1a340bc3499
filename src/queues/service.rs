//! Who sees the Queues overview and what it answers: any signed-in human lists the
//! queues of their own scopes (an outsider's queues are simply not there); a queue's
//! own page takes a member of its scope (anyone else: 404, as for a queue that does not
//! exist or was never measured). Pausing and resuming is the admission service's
//! ([`crate::service::admission::set`]), which takes an admin.

use chrono::{DateTime, Duration, Utc};

use crate::domain::ids::EndpointId;
use crate::error::{Error, Result};
use crate::queues::rules::order::{self, TroubleKey};
use crate::queues::rules::series::{self, Slot};
use crate::queues::statements::overview::QueueStanding;
use crate::service::Services;
use crate::service::permissions::{Action, Place, check};
use crate::service::principal::Principal;
use crate::store::tenancy::Reach;

/// Minutes in a list row's sparkline.
pub const SPARK_MINUTES: usize = 60;
/// Hours on a queue's own page.
pub const DAY_HOURS: usize = 24;

/// One page of the overview.
#[derive(Debug, Clone)]
pub struct Page {
    /// The queues, trouble first.
    pub queues: Vec<QueueStanding>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// One queue over the last day.
#[derive(Debug, Clone)]
pub struct QueueDay {
    /// How it stands.
    pub standing: QueueStanding,
    /// What finished in each of the last [`DAY_HOURS`] hours, oldest first.
    pub hours: Vec<Slot>,
    /// The same per minute over the last hour.
    pub minutes: Vec<Slot>,
}

impl QueueDay {
    /// The day's totals.
    pub fn total(&self) -> Slot {
        let mut t = Slot::default();
        for h in &self.hours {
            t.add(*h);
        }
        t
    }
}

/// One page of the queues in the caller's reach after `cursor`, at most `limit`
/// (1–1000, default 200). A limit out of range or a cursor this server did not write is
/// refused (422) naming the field.
pub async fn list(s: &Services, who: &Reach, limit: Option<i64>, cursor: Option<&str>) -> Result<Page> {
    check(Action::ListQueues, Principal::Human(who), None)?;
    let limit =
        order::limit(limit).ok_or_else(|| Error::invalid("limit", format!("must be 1 to {}", order::LIMIT_MAX)))?;
    let after: Option<TroubleKey> = match cursor.map(str::trim).filter(|c| !c.is_empty()) {
        None => None,
        Some(c) => Some(order::after(c).ok_or_else(|| Error::invalid("cursor", "is not a cursor this server gave"))?),
    };
    let mut queues = s.store.queue_standings(&who.scope_ids(), after.as_ref(), limit + 1).await?;
    let next_cursor = if queues.len() as i64 > limit {
        queues.truncate(limit as usize);
        queues.last().map(|q| order::cursor(&q.key()))
    } else {
        None
    };
    Ok(Page { queues, next_cursor })
}

/// The last hour, per minute, of each of `queues` (in their order), as of `now`.
pub async fn sparklines(s: &Services, queues: &[QueueStanding], now: DateTime<Utc>) -> Result<Vec<Vec<Slot>>> {
    let keys: Vec<(EndpointId, String)> = queues.iter().map(|q| (q.endpoint_id, q.queue.clone())).collect();
    let since = now - Duration::minutes(SPARK_MINUTES as i64);
    let rows = s.store.queue_minutes(&keys, since).await?;
    Ok(keys
        .iter()
        .map(|(endpoint, queue)| {
            let mine =
                rows.iter().filter(|r| r.endpoint_id == *endpoint && r.queue == *queue).map(|r| (r.minute, r.slot()));
            series::fill(mine, now, Duration::minutes(1), SPARK_MINUTES)
        })
        .collect())
}

/// Endpoint `endpoint`'s queue `queue` over the last day, as of `now`. Not found (404)
/// when the endpoint is outside the caller's scopes or the census has not seen the
/// queue.
pub async fn show(
    s: &Services,
    who: &Reach,
    endpoint: EndpointId,
    queue: &str,
    now: DateTime<Utc>,
) -> Result<QueueDay> {
    let standing = s.store.queue_standing(&who.scope_ids(), endpoint, queue).await?.ok_or(Error::NotFound)?;
    check(Action::ShowQueue, Principal::Human(who), Some(Place::endpoint(standing.scope_id, endpoint)))?;
    let rows = s.store.queue_minutes(&[(endpoint, queue.to_owned())], now - Duration::hours(DAY_HOURS as i64)).await?;
    let hours = series::fill(rows.iter().map(|r| (r.minute, r.slot())), now, Duration::hours(1), DAY_HOURS);
    let minutes = series::fill(rows.iter().map(|r| (r.minute, r.slot())), now, Duration::minutes(1), SPARK_MINUTES);
    Ok(QueueDay { standing, hours, minutes })
}

/// Whether the caller may pause and resume `standing` (an admin of its scope).
pub fn may_act(who: &Reach, standing: &QueueStanding) -> bool {
    who.is_admin_of(standing.scope_id)
}
