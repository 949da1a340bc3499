//! Every call Switchboard makes to the outside goes through here (SPEC section 8): one
//! SSRF guard for hooks, sinks, test sends and digests.
//!
//! - [`policy`]: the pure rules (URL shape, the operator's allowlist, our own listen
//!   address) over [`address`] classes; [`self_target`]: our own base URL's host and
//!   ingest routes; [`refusal`](mod@refusal): the verdict any of them gives.
//! - [`lookup`]: DNS behind a trait, so tests can script it.
//! - [`Guard`]: the policy plus DNS; checks a URL when it is saved and builds the HTTP
//!   client whose connector checks again at dial time (DNS rebinding is refused).
//! - [`classify`]: tells a guard refusal (never retried) from timeouts, TLS and
//!   network failures.

pub mod address;
pub mod classify;
mod connector;
pub mod failure;
pub mod guard;
pub mod lookup;
pub mod policy;
pub mod refusal;
pub mod self_target;

pub use classify::{classify, is_refusal, refusal};
pub use failure::TransportFailure;
pub use guard::{CheckError, Guard, TlsSetupError};
pub use lookup::{Lookup, SystemLookup};
pub use policy::{AddressClass, Policy, Refusal, Target};
