//! The connection vault and notification sinks: owner-scoped credentials (sealed,
//! write-only), the sinks that use them, and each sink's subscriptions. Every query is
//! limited to the scopes it is given; another scope's row answers like none at all.

mod binding;
mod connections;
pub mod outbox;
pub mod owner_pages;
pub mod reach;
mod sink_rows;
mod subscriptions;

pub use binding::BindingReport;
pub use connections::{ConnectionRow, Credential, NewConnection};
pub use sink_rows::{NewSink, SinkChange, SinkRow};
pub use subscriptions::{NewSubscription, SubscriptionRow};

/// Whether `e` is a unique violation (a name already taken in the scope).
fn unique_violation(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _))
}

/// Whether `e` is a foreign-key violation (a connection still used by a sink).
fn still_referenced(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::ForeignKeyViolation, _))
}
