//! Bounded MCP sessions. A session (opened by `initialize` from a client of a handshake
//! revision) lives in this instance's memory until the client deletes it, it sits idle
//! for `SWITCHBOARD_MCP_SESSION_IDLE_SECONDS`, or the server stops. At most
//! `SWITCHBOARD_MCP_MAX_SESSIONS` are open at once on an instance and at most
//! `SWITCHBOARD_MCP_MAX_SESSIONS_PER_ENDPOINT` of them belong to one endpoint; an
//! `initialize` past either bound is refused before a session is made ([`super::gate`]).
//!
//! The [`Registry`] counts places and knows whose each session is. A place is taken
//! before the request reaches rmcp ([`Registry::reserve`]), given to the session rmcp
//! creates for that request ([`Sessions`] finds it in the request's task), and given back
//! when rmcp closes the session, whatever closed it. A place no session took (the request
//! failed) is given back when the request ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, ServerSseMessage, SessionId, SessionManager};

use crate::domain::ids::EndpointId;
use crate::error::Error;

/// How many sessions are open, and whose each is.
pub struct Registry {
    max_open: usize,
    max_per_endpoint: usize,
    state: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    /// Places taken: open sessions and reservations not yet settled.
    taken: usize,
    by_endpoint: HashMap<EndpointId, usize>,
    owners: HashMap<SessionId, EndpointId>,
}

/// A place among the bounded sessions, held for an `initialize` on its way to rmcp.
/// Dropped without becoming a session's, it is given back.
pub struct Place {
    registry: Arc<Registry>,
    endpoint: EndpointId,
    settled: bool,
}

impl Registry {
    /// A registry admitting `max_open` sessions, `max_per_endpoint` of any one endpoint.
    pub fn new(max_open: usize, max_per_endpoint: usize) -> Self {
        Registry { max_open, max_per_endpoint, state: Mutex::new(Counts::default()) }
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        // Nothing panics while holding the lock; a poisoned lock still holds true counts.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a place for a session of `endpoint`: refused with `rate_limited` when the
    /// endpoint holds its share, `unavailable` when the instance is full.
    pub fn reserve(self: &Arc<Self>, endpoint: EndpointId) -> Result<Place, Error> {
        let mut c = self.counts();
        let mine = c.by_endpoint.get(&endpoint).copied().unwrap_or(0);
        if mine >= self.max_per_endpoint {
            return Err(Error::rate_limited(
                format!(
                    "this endpoint holds {mine} open MCP sessions, its most; close one (DELETE with its \
                     Mcp-Session-Id) or let one sit idle until it closes"
                ),
                Duration::from_secs(1),
            ));
        }
        if c.taken >= self.max_open {
            return Err(Error::Unavailable(format!("this instance holds {} open MCP sessions, its most", c.taken)));
        }
        c.taken += 1;
        *c.by_endpoint.entry(endpoint).or_default() += 1;
        Ok(Place { registry: self.clone(), endpoint, settled: false })
    }

    /// Whose session `id` is, if it is open here.
    pub fn owner(&self, id: &str) -> Option<EndpointId> {
        self.counts().owners.get(id).copied()
    }

    /// Sessions open (and places reserved) on this instance now.
    pub fn open(&self) -> usize {
        self.counts().taken
    }

    /// Gives `place` to the session `id`.
    fn settle(&self, mut place: Place, id: &SessionId) {
        place.settled = true;
        self.counts().owners.insert(id.clone(), place.endpoint);
    }

    /// Gives back the place of session `id` (closed), if it held one.
    fn close(&self, id: &SessionId) {
        let mut c = self.counts();
        if let Some(endpoint) = c.owners.remove(id) {
            c.give_back(endpoint);
        }
    }
}

impl Counts {
    fn give_back(&mut self, endpoint: EndpointId) {
        self.taken = self.taken.saturating_sub(1);
        if let Some(n) = self.by_endpoint.get_mut(&endpoint) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_endpoint.remove(&endpoint);
            }
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if !self.settled {
            self.registry.counts().give_back(self.endpoint);
        }
    }
}

tokio::task_local! {
    /// The place the request being served took for the session it may open.
    static OPENING: std::cell::RefCell<Option<Place>>;
}

/// Runs `request` (the rest of the request's handling, rmcp included) with `place` ready
/// for the session it opens; a place no session took is given back when it ends.
pub async fn opening<F: std::future::Future>(place: Option<Place>, request: F) -> F::Output {
    OPENING.scope(std::cell::RefCell::new(place), request).await
}

/// rmcp's in-memory sessions, counted in the [`Registry`]: each session takes the place
/// its `initialize` reserved, and gives it back when rmcp closes it (on DELETE, when it
/// idles out, when its worker ends).
pub struct Sessions {
    local: LocalSessionManager,
    registry: Arc<Registry>,
}

impl Sessions {
    /// Sessions closed after `idle` without a request, counted in `registry`.
    pub fn new(registry: Arc<Registry>, idle: Duration) -> Self {
        let mut local = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        // No priming event before a request's answer (see `super::Mcp::new`).
        config.sse_retry = None;
        local.session_config = config;
        Sessions { local, registry }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        match OPENING.try_with(|place| place.borrow_mut().take()) {
            Ok(Some(place)) => self.registry.settle(place, &id),
            // The gate reserves for every `initialize` it lets through; reaching here
            // without a place means a session it did not see coming, so say so.
            _ => tracing::warn!("an MCP session was opened without a place among the bounded sessions"),
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.registry.close(id);
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(&self, _id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Sessions are not shared between instances: a client whose instance is gone
        // starts a new one (or speaks the stateless revision).
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(n: u128) -> EndpointId {
        EndpointId(uuid::Uuid::from_u128(n))
    }

    #[test]
    fn a_place_no_session_took_is_given_back() {
        let registry = Arc::new(Registry::new(1, 1));
        drop(registry.reserve(endpoint(1)).unwrap());
        assert_eq!(registry.open(), 0);
        assert!(registry.reserve(endpoint(1)).is_ok(), "the place is free again");
    }

    #[test]
    fn an_endpoint_holds_at_most_its_share_and_the_instance_at_most_its_bound() {
        let registry = Arc::new(Registry::new(3, 2));
        let (a, b) = (registry.reserve(endpoint(1)).unwrap(), registry.reserve(endpoint(1)).unwrap());
        let err = registry.reserve(endpoint(1)).err().unwrap();
        assert_eq!(err.code(), "rate_limited", "{err}");
        let c = registry.reserve(endpoint(2)).unwrap();
        let err = registry.reserve(endpoint(3)).err().unwrap();
        assert_eq!(err.code(), "unavailable", "{err}");
        let ids: Vec<SessionId> = vec!["s1".into(), "s2".into(), "s3".into()];
        registry.settle(a, &ids[0]);
        registry.settle(b, &ids[1]);
        registry.settle(c, &ids[2]);
        assert_eq!(registry.owner("s1"), Some(endpoint(1)));
        assert_eq!(registry.owner("s3"), Some(endpoint(2)));
        registry.close(&ids[0]);
        assert_eq!(registry.owner("s1"), None);
        assert!(registry.reserve(endpoint(1)).is_ok(), "a closed session's place is free again");
        registry.close(&ids[0]);
        assert_eq!(registry.open(), 2, "closing twice gives back once");
    }
}
