//! The Queues pages (SPEC 13 "Queues overview"): `/queues`, where every queue in the
//! human's reach stands, trouble first, and `/queues/{endpoint_id}/{queue}`, one
//! queue over the last 24 hours; members see, admins pause and resume.
//!
//! The views ([`view`], [`detail`], [`admission`], [`spark`]) are pure functions from
//! the census's rows to markup; the [`handlers`] call [`crate::queues::service`], the
//! service `GET /api/v1/queues` calls.

pub mod admission;
pub mod detail;
pub mod handlers;
pub mod paths;
pub mod spark;
pub mod view;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Queues pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::QUEUES, Action::ListQueues, handlers::list),
        Entry::new(Method::GET, paths::QUEUE, Action::ShowQueue, handlers::show),
        Entry::new(Method::POST, paths::QUEUE_ADMISSION, Action::SetAdmission, handlers::set_paused),
    ]
}
