//! Bounded MCP sessions. A session (opened by `initialize` from a client of a handshake
//! revision) lives in this instance's memory until the client deletes it, it sits idle
//! for `SWITCHBOARD_MCP_SESSION_IDLE_SECONDS`, or the server stops. At most
//! `SWITCHBOARD_MCP_MAX_SESSIONS` are open at once on an instance and at most
//! `SWITCHBOARD_MCP_MAX_SESSIONS_PER_ENDPOINT` of them belong to one endpoint, and the
//! endpoints of one owner scope hold at most their fair share (all but
//! `SWITCHBOARD_MCP_RESERVE_PERCENT` of the instance's places, kept for other scopes:
//! [`crate::domain::fair_share`]); an `initialize` past any bound is refused before a
//! session is made ([`super::gate`]).
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

use crate::domain::fair_share::{Admit, Share};
use crate::domain::ids::{EndpointId, ScopeId};
use crate::error::Error;
use crate::metrics::PlaceRefusal;

/// How many sessions are open, and whose each is.
pub struct Registry {
    share: Share,
    max_per_endpoint: usize,
    state: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    /// Places taken: open sessions and reservations not yet settled.
    taken: usize,
    by_endpoint: HashMap<EndpointId, usize>,
    by_scope: HashMap<ScopeId, usize>,
    owners: HashMap<SessionId, Owner>,
}

/// Whose a place is: the endpoint, and its owner scope (whose share it counts in).
#[derive(Debug, Clone, Copy)]
struct Owner {
    endpoint: EndpointId,
    scope: ScopeId,
}

/// A place among the bounded sessions, held for an `initialize` on its way to rmcp.
/// Dropped without becoming a session's, it is given back.
pub struct SessionPlace {
    registry: Arc<Registry>,
    owner: Owner,
    settled: bool,
}

/// Why an `initialize` got no place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRefused {
    /// The endpoint holds its most sessions.
    EndpointShare {
        /// The sessions it holds.
        held: usize,
    },
    /// The endpoint's owner scope holds its share of the instance's places.
    ScopeShare {
        /// The places its endpoints hold.
        held: usize,
    },
    /// The instance holds its most sessions.
    Full {
        /// The places taken.
        taken: usize,
    },
}

impl SessionRefused {
    /// The reason, as the refusal metric labels it.
    pub fn reason(&self) -> PlaceRefusal {
        match self {
            SessionRefused::EndpointShare { .. } => PlaceRefusal::EndpointShare,
            SessionRefused::ScopeShare { .. } => PlaceRefusal::ScopeShare,
            SessionRefused::Full { .. } => PlaceRefusal::InstanceFull,
        }
    }
}

impl From<SessionRefused> for Error {
    /// A share held is the caller's to free (429 `rate_limited`); a full instance is not
    /// (503 `unavailable`).
    fn from(refused: SessionRefused) -> Error {
        match refused {
            SessionRefused::EndpointShare { held } => Error::rate_limited(
                format!(
                    "this endpoint holds {held} open MCP sessions, its most; close one (DELETE with its \
                     Mcp-Session-Id) or let one sit idle until it closes"
                ),
                Duration::from_secs(1),
            ),
            SessionRefused::ScopeShare { held } => Error::rate_limited(
                format!(
                    "the endpoints of this owner hold {held} open MCP sessions on this instance, their share \
                     (the rest is kept for other owners); close one (DELETE with its Mcp-Session-Id) or let \
                     one sit idle until it closes"
                ),
                Duration::from_secs(1),
            ),
            SessionRefused::Full { taken } => {
                Error::Unavailable(format!("this instance holds {taken} open MCP sessions, its most"))
            }
        }
    }
}

impl Registry {
    /// A registry admitting `max_open` sessions, `max_per_endpoint` of any one endpoint,
    /// and keeping `reserve_percent` of them for scopes other than any one.
    pub fn new(max_open: usize, max_per_endpoint: usize, reserve_percent: u8) -> Self {
        Registry {
            share: Share::new(max_open, reserve_percent),
            max_per_endpoint,
            state: Mutex::new(Counts::default()),
        }
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        // Nothing panics while holding the lock; a poisoned lock still holds true counts.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a place for a session of `endpoint` (of owner `scope`), or says why not: the
    /// endpoint holds its most, the instance is full, or the scope holds its share (in
    /// that order).
    pub fn reserve(self: &Arc<Self>, endpoint: EndpointId, scope: ScopeId) -> Result<SessionPlace, SessionRefused> {
        let mut c = self.counts();
        let held = c.by_endpoint.get(&endpoint).copied().unwrap_or(0);
        if held >= self.max_per_endpoint {
            return Err(SessionRefused::EndpointShare { held });
        }
        let held = c.by_scope.get(&scope).copied().unwrap_or(0);
        match self.share.admit(c.taken, held) {
            Admit::Take => {}
            Admit::Full => return Err(SessionRefused::Full { taken: c.taken }),
            Admit::ScopeShare => return Err(SessionRefused::ScopeShare { held }),
        }
        c.taken += 1;
        *c.by_endpoint.entry(endpoint).or_default() += 1;
        *c.by_scope.entry(scope).or_default() += 1;
        Ok(SessionPlace { registry: self.clone(), owner: Owner { endpoint, scope }, settled: false })
    }

    /// Whose session `id` is, if it is open here.
    pub fn owner(&self, id: &str) -> Option<EndpointId> {
        self.counts().owners.get(id).map(|o| o.endpoint)
    }

    /// Sessions open (and places reserved) on this instance now.
    pub fn open(&self) -> usize {
        self.counts().taken
    }

    /// Gives `place` to the session `id`.
    fn settle(&self, mut place: SessionPlace, id: &SessionId) {
        place.settled = true;
        self.counts().owners.insert(id.clone(), place.owner);
    }

    /// Gives back the place of session `id` (closed), if it held one.
    fn close(&self, id: &SessionId) {
        let mut c = self.counts();
        if let Some(owner) = c.owners.remove(id) {
            c.give_back(owner);
        }
    }
}

impl Counts {
    fn give_back(&mut self, owner: Owner) {
        self.taken = self.taken.saturating_sub(1);
        count_down(&mut self.by_endpoint, owner.endpoint);
        count_down(&mut self.by_scope, owner.scope);
    }
}

/// One place fewer for `key`; a key that holds none is left out.
fn count_down<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: K) {
    if let Some(n) = counts.get_mut(&key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            counts.remove(&key);
        }
    }
}

impl Drop for SessionPlace {
    fn drop(&mut self) {
        if !self.settled {
            self.registry.counts().give_back(self.owner);
        }
    }
}

tokio::task_local! {
    /// The place the request being served took for the session it may open.
    static OPENING: std::cell::RefCell<Option<SessionPlace>>;
}

/// Runs `request` (the rest of the request's handling, rmcp included) with `place` ready
/// for the session it opens; a place no session took is given back when it ends.
pub async fn opening<F: std::future::Future>(place: Option<SessionPlace>, request: F) -> F::Output {
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

    fn scope(n: u128) -> ScopeId {
        ScopeId(uuid::Uuid::from_u128(n))
    }

    /// The one owner scope of the tests that are not about shares.
    const S: ScopeId = ScopeId(uuid::Uuid::from_u128(100));

    fn refusal(registry: &Arc<Registry>, endpoint: EndpointId, scope: ScopeId) -> Error {
        Error::from(registry.reserve(endpoint, scope).err().expect("refused"))
    }

    #[test]
    fn a_place_no_session_took_is_given_back() {
        let registry = Arc::new(Registry::new(1, 1, 25));
        drop(registry.reserve(endpoint(1), S).unwrap());
        assert_eq!(registry.open(), 0);
        assert!(registry.reserve(endpoint(1), S).is_ok(), "the place is free again");
    }

    #[test]
    fn an_endpoint_holds_at_most_its_share_and_the_instance_at_most_its_bound() {
        let registry = Arc::new(Registry::new(3, 2, 0));
        let (a, b) = (registry.reserve(endpoint(1), S).unwrap(), registry.reserve(endpoint(1), S).unwrap());
        let err = refusal(&registry, endpoint(1), S);
        assert_eq!(err.code(), "rate_limited", "{err}");
        let c = registry.reserve(endpoint(2), S).unwrap();
        let err = refusal(&registry, endpoint(3), S);
        assert_eq!(err.code(), "unavailable", "{err}");
        let ids: Vec<SessionId> = vec!["s1".into(), "s2".into(), "s3".into()];
        registry.settle(a, &ids[0]);
        registry.settle(b, &ids[1]);
        registry.settle(c, &ids[2]);
        assert_eq!(registry.owner("s1"), Some(endpoint(1)));
        assert_eq!(registry.owner("s3"), Some(endpoint(2)));
        registry.close(&ids[0]);
        assert_eq!(registry.owner("s1"), None);
        assert!(registry.reserve(endpoint(1), S).is_ok(), "a closed session's place is free again");
        registry.close(&ids[0]);
        assert_eq!(registry.open(), 2, "closing twice gives back once");
    }

    #[test]
    fn the_endpoints_of_one_scope_hold_at_most_its_share_and_another_scope_opens_sessions() {
        let registry = Arc::new(Registry::new(8, 32, 25));
        // Six of eight over three endpoints of one scope; the seventh is refused, on any
        // of its endpoints, with 429.
        let mine: Vec<SessionPlace> = (0..6).map(|i| registry.reserve(endpoint(i % 3), scope(1)).unwrap()).collect();
        let refused = registry.reserve(endpoint(9), scope(1)).err().unwrap();
        assert_eq!(refused, SessionRefused::ScopeShare { held: 6 });
        assert_eq!(refused.reason(), PlaceRefusal::ScopeShare);
        let err = Error::from(refused);
        assert_eq!((err.code(), err.retry_after()), ("rate_limited", Some(1)), "{err}");
        // Another scope takes the two kept places; then the instance is full for both.
        let theirs =
            [registry.reserve(endpoint(20), scope(2)).unwrap(), registry.reserve(endpoint(21), scope(2)).unwrap()];
        assert_eq!(registry.reserve(endpoint(22), scope(2)).err(), Some(SessionRefused::Full { taken: 8 }));
        assert_eq!(refusal(&registry, endpoint(0), scope(1)).code(), "unavailable");
        // A place the scope gives back (a session closed, or a request's place unused) is
        // its to take again.
        let id: SessionId = "s".into();
        let mut mine = mine.into_iter();
        registry.settle(mine.next().unwrap(), &id);
        drop(theirs);
        registry.close(&id);
        let _again = registry.reserve(endpoint(0), scope(1)).unwrap();
        assert!(matches!(registry.reserve(endpoint(0), scope(1)), Err(SessionRefused::ScopeShare { .. })));
    }
}
