//! Notification sinks, the pure part: nothing here touches the database or the
//! network. The worker renders a [`content::Message`], builds a request
//! ([`crate::sinks::clients`]), sends it through the outbound guard, and feeds the
//! answer to [`outcome`].
//!
//! - [`vocabulary`]: how loud a notification is, what kind of sink and credential
//!   carries it, which event raised it, where its outbox row stands.
//! - [`content`]: titles, bodies, links and labels, from plain facts.
//! - [`outcome`]: the class of a sink's answer, and the retry schedule.
//! - [`schemes`]: parsing stateless Apprise URLs and the instance's scheme allowlist.
//! - [`budget`]: the per-sink token bucket and what to send, hold or coalesce.
//! - [`dedup`]: the keys under which a repeat folds into the pending row.
//! - [`claim_window`]: how long a worker holds the rows it took.
//! - [`url_path`]: a base URL's trailing slashes and a path segment's encoding.
//! - [`destination`]: a connection's destination, normalised, and how an earlier
//!   release's connection is bound to one.

pub mod budget;
pub mod claim_window;
pub mod content;
pub mod dedup;
pub mod destination;
pub mod outcome;
pub mod schemes;
pub mod url_path;
pub mod vocabulary;
