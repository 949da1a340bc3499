//! DNS as a seam: the guard resolves through [`Lookup`], so tests can script answers
//! (a name that is public when a hook is saved and private when it is dialled).

use std::io;
use std::net::SocketAddr;

use futures_util::future::BoxFuture;

/// Resolves a host name to socket addresses.
pub trait Lookup: Send + Sync + 'static {
    /// Every address `host` resolves to, each with `port`. An error is a DNS failure
    /// (retryable); an empty answer is treated as one.
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>>;
}

/// The system resolver (`getaddrinfo` on a blocking thread, via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}
