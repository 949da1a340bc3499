//! The dial-time check, inside awc's connector. actix-tls's resolver is skipped for
//! IP-literal hosts and for requests that carry a preset address, so the check wraps
//! the whole TCP connector instead: every connection, however its address was found,
//! is checked here and made only to the addresses checked. A DNS answer that changed
//! since the target was saved (rebinding) is judged afresh and refused.

use std::task::{Context, Poll};

use actix_rt::net::TcpStream;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection, ConnectorService, Resolve, Resolver};
use actix_web::dev::Service;
use actix_web::http::Uri;
use futures_util::future::LocalBoxFuture;

use super::guard::{CheckError, Guard};

/// awc's TCP connector behind the guard.
#[derive(Clone)]
pub(super) struct GuardedConnector {
    guard: Guard,
    tcp: ConnectorService,
}

impl GuardedConnector {
    pub(super) fn new(guard: Guard) -> Self {
        // The inner connector only ever receives resolved requests; should one arrive
        // unresolved anyway, its resolver refuses rather than looking the name up unchecked.
        let tcp = actix_tls::connect::Connector::new(Resolver::custom(NeverResolve)).service();
        GuardedConnector { guard, tcp }
    }
}

impl Service<ConnectInfo<Uri>> for GuardedConnector {
    type Response = Connection<Uri, TcpStream>;
    type Error = ConnectError;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&self, req: ConnectInfo<Uri>) -> Self::Future {
        let guard = self.guard.clone();
        let tcp = self.tcp.clone();
        Box::pin(async move {
            let target = guard.policy().target_of(req.request()).map_err(|r| refused(r.into()))?;
            let preset: Vec<_> = req.addrs().collect();
            let addrs = if preset.is_empty() {
                guard.addresses(&target).await.map_err(refused)?
            } else {
                guard.policy().admit_all(&preset).map_err(|r| refused(r.into()))?;
                preset
            };
            tcp.call(req.set_addrs(addrs)).await
        })
    }
}

/// Carries the guard's verdict through awc as a resolver error, where
/// [`super::classify`] finds it again. Its message never holds an address.
fn refused(err: CheckError) -> ConnectError {
    match err {
        CheckError::Refused(r) => ConnectError::Resolver(Box::new(r)),
        CheckError::Dns(e) => ConnectError::Resolver(Box::new(e)),
    }
}

struct NeverResolve;

impl Resolve for NeverResolve {
    fn lookup<'a>(
        &'a self,
        _host: &'a str,
        _port: u16,
    ) -> LocalBoxFuture<'a, Result<Vec<std::net::SocketAddr>, Box<dyn std::error::Error>>> {
        Box::pin(async { Err(Box::new(super::policy::Refusal::Malformed) as Box<dyn std::error::Error>) })
    }
}
