//! The dial-time check, inside awc's connector. actix-tls's resolver is skipped for
//! IP-literal hosts and for requests that carry a preset address, so the check wraps
//! the whole TCP connector instead: every connection, however its address was found,
//! is checked here and made only to the addresses checked. A DNS answer that changed
//! since the target was saved (rebinding) is judged afresh and refused.
//!
//! The connector knows only [`DialCheck`]; the guard implements it, so the two modules
//! depend one way (guard → connector).

use std::net::SocketAddr;
use std::task::{Context, Poll};

use actix_rt::net::TcpStream;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection, ConnectorService, Resolve, Resolver};
use actix_web::dev::Service;
use actix_web::http::Uri;
use futures_util::future::LocalBoxFuture;

/// What the connector asks before every dial: the addresses `uri` may be dialled at
/// (`preset`, when the request carries them, checked; else resolved and checked), or
/// why not, as the error awc carries back to the caller.
pub(super) trait DialCheck: Clone + 'static {
    /// The admitted addresses, or the refusal.
    fn admitted(
        &self,
        uri: Uri,
        preset: Vec<SocketAddr>,
    ) -> LocalBoxFuture<'static, Result<Vec<SocketAddr>, ConnectError>>;
}

/// awc's TCP connector behind a [`DialCheck`].
#[derive(Clone)]
pub(super) struct GuardedConnector<G> {
    guard: G,
    tcp: ConnectorService,
}

impl<G: DialCheck> GuardedConnector<G> {
    pub(super) fn new(guard: G) -> Self {
        // The inner connector only ever receives resolved requests; should one arrive
        // unresolved anyway, its resolver refuses rather than looking the name up unchecked.
        let tcp = actix_tls::connect::Connector::new(Resolver::custom(NeverResolve)).service();
        GuardedConnector { guard, tcp }
    }
}

impl<G: DialCheck> Service<ConnectInfo<Uri>> for GuardedConnector<G> {
    type Response = Connection<Uri, TcpStream>;
    type Error = ConnectError;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&self, req: ConnectInfo<Uri>) -> Self::Future {
        let admitted = self.guard.admitted(req.request().clone(), req.addrs().collect());
        let tcp = self.tcp.clone();
        Box::pin(async move {
            let addrs = admitted.await?;
            tcp.call(req.set_addrs(addrs)).await
        })
    }
}

struct NeverResolve;

impl Resolve for NeverResolve {
    fn lookup<'a>(
        &'a self,
        _host: &'a str,
        _port: u16,
    ) -> LocalBoxFuture<'a, Result<Vec<std::net::SocketAddr>, Box<dyn std::error::Error>>> {
        Box::pin(async { Err(Box::new(super::refusal::Refusal::Malformed) as Box<dyn std::error::Error>) })
    }
}
