//! The outbound guard against real receivers on loopback: what it lets through, what it
//! refuses before a byte is sent, redirects left unfollowed, and a DNS answer that
//! changes between the save-time check and the dial.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use switchboard::config::CidrList;
use switchboard::outbound::{AddressClass, Guard, Lookup, Policy, Refusal, TransportFailure, classify, refusal};

use testkit::receiver::{Receiver, Reply};

use crate::harness::TestApp;

fn allow(entries: &[(&str, u8)]) -> CidrList {
    CidrList(entries.iter().map(|(ip, p)| (ip.parse().unwrap(), *p)).collect())
}

/// A guard whose own address is a port nobody listens on, unless a test says otherwise.
fn guard(allow_http: bool, allowlist: &[(&str, u8)]) -> Guard {
    guard_owning(allow_http, allowlist, "127.0.0.1:1".parse().unwrap())
}

fn guard_owning(allow_http: bool, allowlist: &[(&str, u8)], own: SocketAddr) -> Guard {
    Guard::new(Policy::new(allow_http, &allow(allowlist), own)).unwrap()
}

/// Answers each lookup with the next scripted IP (for every name) and counts lookups.
struct Scripted {
    answers: Mutex<Vec<io::Result<&'static str>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Scripted {
    fn new(answers: Vec<io::Result<&'static str>>) -> (Scripted, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        (Scripted { answers: Mutex::new(answers), asked: asked.clone() }, asked)
    }
}

impl Lookup for Scripted {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        self.asked.lock().unwrap().push(host.to_owned());
        let next = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { next.map(|ip| vec![SocketAddr::new(ip.parse().unwrap(), port)]) })
    }
}

#[actix_web::test]
async fn a_loopback_receiver_is_refused_at_save_and_at_dial_without_an_allowlist() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let g = guard(true, &[]);
    let err = g.check(&rx.url_of("/hook")).await.unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::Address(AddressClass::Loopback)));
    assert!(!err.to_string().contains("127.0.0.1"), "{err}");

    // The client refuses by itself too: a caller that skipped the check sends nothing.
    let err = g.client().post(rx.url_of("/hook")).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&err), TransportFailure::ForbiddenTarget);
    assert_eq!(refusal(&err), Some(Refusal::Address(AddressClass::Loopback)));
    assert!(!err.to_string().contains("127.0.0.1"), "{err}");
    assert!(rx.paths().is_empty());
}

#[actix_web::test]
async fn an_allowlisted_loopback_receiver_is_reached_over_plain_http_when_enabled() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let g = guard(true, &[("127.0.0.1", 32)]);
    g.check(&rx.url_of("/hook")).await.unwrap();
    let resp = g.client().post(rx.url_of("/hook")).send_body("{}").await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(rx.paths(), ["/hook"]);
}

#[actix_web::test]
async fn plain_http_is_refused_without_allow_http_even_to_an_allowlisted_host() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let g = guard(false, &[("127.0.0.1", 32)]);
    assert_eq!(g.check(&rx.url_of("/hook")).await.unwrap_err().refusal(), Some(Refusal::Scheme));
    let err = g.client().post(rx.url_of("/hook")).send_body("{}").await.unwrap_err();
    assert_eq!((classify(&err), refusal(&err)), (TransportFailure::RejectedSsrf, Some(Refusal::Scheme)));
    assert!(rx.paths().is_empty());
}

#[actix_web::test]
async fn a_redirect_is_returned_to_the_caller_and_never_followed() {
    let landing = Receiver::scripted(vec![], Reply::Status(200)).await;
    let redirector = Receiver::scripted(vec![], Reply::RedirectTo(landing.url_of("/landed"))).await;
    let g = guard(true, &[("127.0.0.1", 32)]);
    let resp = g.client().post(redirector.url_of("/hook")).send_body("{}").await.unwrap();
    assert_eq!(resp.status(), 302);
    assert_eq!(redirector.paths(), ["/hook"]);
    assert!(landing.paths().is_empty(), "the redirect target must get nothing");
}

#[actix_web::test]
async fn a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_dial() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    // Public when the hook is saved, loopback when it is dialled. The public address is
    // never connected to: only the save-time check sees it.
    let (lookup, asked) = Scripted::new(vec![Ok("203.0.113.10"), Ok("127.0.0.1")]);
    let g = guard(true, &[]).with_lookup(lookup);
    let url = format!("http://hooks.rebind.test:{}/hook", rx.port());
    g.check(&url).await.expect("public at save time");

    let err = g.client().post(&url).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&err), TransportFailure::ForbiddenTarget);
    assert!(!classify(&err).is_retryable());
    assert_eq!(refusal(&err), Some(Refusal::Address(AddressClass::Loopback)));
    assert_eq!(*asked.lock().unwrap(), ["hooks.rebind.test", "hooks.rebind.test"], "the dial looked the name up again");
    assert!(rx.paths().is_empty());
}

/// A name that no longer resolves at dial reads as one that now points somewhere
/// refused: the same class, never retried, so a stored `last_error` and the attempts
/// made do not tell the two apart. Only a resolver that does not answer in time is a
/// (retried) timeout.
#[actix_web::test]
async fn a_name_that_does_not_resolve_at_dial_is_refused_as_a_forbidden_target() {
    let (lookup, _) = Scripted::new(vec![
        Err(io::Error::other("SERVFAIL")),
        Ok("10.1.2.3"),
        Err(io::Error::new(io::ErrorKind::TimedOut, "slow")),
    ]);
    let g = guard(true, &[]).with_lookup(lookup);
    let url = "http://hooks.rebind.test:9/hook";
    let unresolved = g.client().post(url).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&unresolved), TransportFailure::ForbiddenTarget);
    assert!(!classify(&unresolved).is_retryable());
    assert_eq!(refusal(&unresolved), Some(Refusal::Unresolved));
    let private = g.client().post(url).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&private), classify(&unresolved));
    let slow = g.client().post(url).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&slow), TransportFailure::Timeout);
    assert!(classify(&slow).is_retryable());
}

#[actix_web::test]
async fn switchboards_own_listen_address_is_refused_even_when_allowlisted() {
    let app = TestApp::spawn().await;
    let own: SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let other = Receiver::scripted(vec![], Reply::Status(200)).await;
    let g = guard_owning(true, &[("127.0.0.1", 32)], own);

    let healthz = format!("{}/healthz", app.base);
    assert_eq!(g.check(&healthz).await.unwrap_err().refusal(), Some(Refusal::OwnAddress));
    let err = g.client().get(&healthz).send().await.unwrap_err();
    assert_eq!((classify(&err), refusal(&err)), (TransportFailure::ForbiddenTarget, Some(Refusal::OwnAddress)));

    // The same host on another port is another service, and the allowlist admits it.
    let resp = g.client().post(other.url_of("/hook")).send_body("{}").await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[actix_web::test]
async fn https_to_a_plain_http_server_fails_as_tls() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let g = guard(false, &[("127.0.0.1", 32)]);
    let err = g.client().post(format!("https://{}/hook", rx.addr())).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&err), TransportFailure::Tls, "{err:?}");
    // A real handshake was tried (rustls is wired in), not refused for want of TLS support.
    assert!(
        !matches!(err, awc::error::SendRequestError::Connect(awc::error::ConnectError::SslIsNotSupported)),
        "{err:?}"
    );
    assert!(rx.paths().is_empty());
}

#[actix_web::test]
async fn a_receiver_slower_than_the_timeout_is_a_timeout() {
    // Slower than the guard's timeout, quicker than awc's default (5 s): a timeout can
    // only be the guard's own, and a client without it would get the 200.
    let rx = Receiver::scripted(vec![], Reply::Slow(Duration::from_secs(3), 200)).await;
    let g = guard(true, &[("127.0.0.1", 32)]).with_timeout(Duration::from_millis(300));
    let err = g.client().post(rx.url_of("/hook")).send_body("{}").await.unwrap_err();
    assert_eq!(classify(&err), TransportFailure::Timeout, "{err:?}");
}
