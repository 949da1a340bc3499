//! The Digests pages: every digest of the human's scopes (schedule, the next send time
//! in the schedule's zone and in UTC, what it covers, its sinks, what became of its
//! last send time and why), one digest's page with its recent send times and, for an
//! admin of its scope, the edit form; and its preview (measured now, sent nowhere),
//! where a section that could not be measured reads `unavailable: <reason>`, never 0.
//!
//! The views ([`view`], [`detail`], [`preview`], [`runs`], [`editor`]) are pure
//! functions from rows to markup; the [`handlers`] call the same service as the
//! operator API ([`crate::digests::service`]), so the Board and the API validate
//! alike. Changing a team's digests takes an admin of the team, as in the API.

pub mod detail;
pub mod editor;
pub mod form;
pub mod format;
pub mod handlers;
pub mod paths;
pub mod preview;
pub mod runs;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Digests pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::DIGESTS, Action::ListDigests, handlers::list),
        Entry::new(Method::POST, paths::DIGESTS, Action::CreateDigest, handlers::create),
        Entry::new(Method::GET, paths::DIGEST, Action::ShowDigest, handlers::show),
        Entry::new(Method::POST, paths::DIGEST_UPDATE, Action::UpdateDigest, handlers::update),
        Entry::new(Method::POST, paths::DIGEST_DELETE, Action::DeleteDigest, handlers::delete),
        Entry::new(Method::GET, paths::DIGEST_PREVIEW, Action::PreviewDigest, handlers::preview),
    ]
}
