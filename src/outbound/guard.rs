//! The guard: the policy plus DNS. [`Guard::check`] runs when a target is saved (and
//! before every attempt); [`Guard::client`] builds the HTTP client whose connector runs
//! the same check at dial time and connects only to the addresses it validated.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_tls::connect::ConnectError;
use actix_web::http::Uri;
use futures_util::future::LocalBoxFuture;

use super::connector::{DialCheck, GuardedConnector};
use super::lookup::{Lookup, SystemLookup};
use super::policy::{Policy, Target};
use super::refusal::Refusal;
use crate::config::Settings;
use crate::metrics::Metrics;

/// Time allowed for one outbound attempt: DNS, connect, TLS and the response head.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a target cannot be used now.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The policy refuses it (a name that does not resolve included): never retried.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The resolver did not answer in time: a timeout, retried.
    #[error("the target's host name could not be resolved in time")]
    Dns(#[source] io::Error),
}

impl CheckError {
    /// Whether trying again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, CheckError::Dns(_))
    }

    /// The policy refusal, if that is what this is.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            CheckError::Refused(r) => Some(*r),
            CheckError::Dns(_) => None,
        }
    }

    /// Whether it depends on where the target's name points (an address class, our
    /// own address, a name that does not resolve or not in time), so that a caller is
    /// told only [`super::refusal::FORBIDDEN_TARGET_MESSAGE`].
    pub fn depends_on_resolution(&self) -> bool {
        match self {
            CheckError::Refused(r) => r.depends_on_resolution(),
            CheckError::Dns(_) => true,
        }
    }

    /// The `reason` label of `switchboard_outbound_refused_total` and of the log line.
    pub fn reason(&self) -> &'static str {
        match self {
            CheckError::Refused(r) => r.reason(),
            CheckError::Dns(_) => "dns_timeout",
        }
    }

    /// The API error for a URL a caller tried to save in `field`: `forbidden_target`
    /// (one message for every cause) when the refusal depends on resolution, else
    /// `invalid_argument` naming the rule.
    pub fn saving(&self, field: &str) -> crate::error::Error {
        match self.refusal() {
            Some(r) if !r.depends_on_resolution() => crate::error::Error::invalid(field, format!("refused: {r}")),
            _ => crate::error::Error::ForbiddenTarget,
        }
    }
}

/// The TLS client configuration could not be built (it never fails with the ring
/// provider's defaults; reported rather than assumed).
#[derive(Debug, thiserror::Error)]
#[error("outbound TLS setup failed: {0}")]
pub struct TlsSetupError(#[from] rustls::Error);

/// The one outbound guard. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct Guard {
    policy: Arc<Policy>,
    lookup: Arc<dyn Lookup>,
    timeout: Duration,
    tls: Arc<rustls::ClientConfig>,
    /// Counts refusals (`switchboard_outbound_refused_total`); none in unit tests.
    metrics: Option<Metrics>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("policy", &self.policy).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Guard {
    /// A guard enforcing `policy`, resolving with the system resolver, 5 s per attempt.
    pub fn new(policy: Policy) -> Result<Self, TlsSetupError> {
        Ok(Guard {
            policy: Arc::new(policy),
            lookup: Arc::new(SystemLookup),
            timeout: DEFAULT_TIMEOUT,
            tls: Arc::new(tls_config()?),
            metrics: None,
        })
    }

    /// The guard the settings describe, for a server bound to `listen` (the real bound
    /// address: with port 0 in the settings, only the listener knows the port).
    pub fn from_settings(settings: &Settings, listen: SocketAddr) -> Result<Self, TlsSetupError> {
        Guard::new(Policy::from_settings(settings, listen))
    }

    /// The same guard resolving names through `lookup` (tests script DNS with this).
    pub fn with_lookup(mut self, lookup: impl Lookup) -> Self {
        self.lookup = Arc::new(lookup);
        self
    }

    /// The same guard counting every refusal in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The same guard with another per-attempt timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The policy it enforces.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The per-attempt timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Checks a URL: the URL rules, then every address its host resolves to (an IP
    /// literal is not looked up). Run when a target is saved and before each attempt.
    /// A refusal is logged and counted by its cause ([`CheckError::reason`]); what a
    /// caller is told of it is [`CheckError::saving`].
    pub async fn check(&self, url: &str) -> Result<(), CheckError> {
        let checked = match self.policy.target(url) {
            Ok(target) => self.addresses(&target).await.map(drop),
            Err(r) => Err(r.into()),
        };
        if let Err(e) = &checked {
            self.note(e, "check");
        }
        checked
    }

    /// Logs and counts a refusal by its cause only: never the URL (it may carry a
    /// token) nor an address it resolved to.
    fn note(&self, err: &CheckError, at: &'static str) {
        let reason = err.reason();
        if at == "dial" {
            tracing::warn!(reason, at, "outbound target refused");
        } else {
            tracing::info!(reason, at, "outbound target refused");
        }
        if let Some(metrics) = &self.metrics {
            metrics.outbound_refused(reason);
        }
    }

    /// The addresses `target` may be dialled at: all of them resolved, all admitted.
    pub async fn addresses(&self, target: &Target) -> Result<Vec<SocketAddr>, CheckError> {
        let addrs = match target.literal {
            Some(ip) => vec![SocketAddr::new(ip, target.port)],
            None => self.resolve(&target.host, target.port).await?,
        };
        self.policy.admit_all(&addrs)?;
        Ok(addrs)
    }

    /// A name that does not resolve (the resolver's error, or no address) is a
    /// refusal like an address class ([`Refusal::Unresolved`]), never retried: were it
    /// a retried network failure, the attempts and `last_error` of a stored target
    /// would tell "does not resolve" from "resolves to a private address". Only a
    /// resolver that does not answer in time is a (retried) timeout.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, CheckError> {
        let answer = match tokio::time::timeout(self.timeout, self.lookup.lookup(host, port)).await {
            Err(_) => return Err(CheckError::Dns(io::Error::new(io::ErrorKind::TimedOut, "DNS lookup timed out"))),
            Ok(Err(e)) if e.kind() == io::ErrorKind::TimedOut => return Err(CheckError::Dns(e)),
            Ok(Err(_)) => return Err(Refusal::Unresolved.into()),
            Ok(Ok(answer)) => answer,
        };
        if answer.is_empty() {
            return Err(Refusal::Unresolved.into());
        }
        // A lookup answers with the port it was asked for; make sure of it, since the
        // policy judges address and port together.
        Ok(answer.into_iter().map(|a| SocketAddr::new(a.ip(), port)).collect())
    }

    /// An HTTP client for outbound calls: every connection is checked at dial time and
    /// made only to validated addresses; redirects are never followed; no proxy (awc has
    /// none); https through rustls with the webpki roots; the whole attempt is bounded by
    /// the timeout. An idle connection is kept for a few seconds and reused for the same
    /// host and port: it goes to an address that was validated when it was dialled, and
    /// a busy receiver is spared a handshake per notification.
    ///
    /// `awc::Client` is not `Send`: build one per thread (per actor) and reuse it.
    pub fn client(&self) -> awc::Client {
        let connector = awc::Connector::new()
            .connector(GuardedConnector::new(self.clone()))
            .rustls_0_23(self.tls.clone())
            .timeout(self.timeout)
            .handshake_timeout(self.timeout)
            .conn_keep_alive(IDLE_KEEP_ALIVE);
        awc::Client::builder().connector(connector).timeout(self.timeout).disable_redirects().finish()
    }
}

/// How long an idle outbound connection is kept for reuse: less than the idle timeout
/// common receivers close on (5 s in actix-web and Node.js), so a connection the
/// receiver is closing is not picked up — that would cost a failed attempt and a retry.
pub const IDLE_KEEP_ALIVE: Duration = Duration::from_secs(4);

/// TLS 1.2+ with the ring provider and the webpki roots; HTTP/1.1 only.
fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(actix_tls::connect::rustls_0_23::webpki_roots_cert_store())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

impl DialCheck for Guard {
    fn admitted(
        &self,
        uri: Uri,
        preset: Vec<SocketAddr>,
    ) -> LocalBoxFuture<'static, Result<Vec<SocketAddr>, ConnectError>> {
        let guard = self.clone();
        Box::pin(async move {
            let admitted = match guard.policy().target_of(&uri) {
                Err(r) => Err(r.into()),
                Ok(_) if !preset.is_empty() => guard.policy().admit_all(&preset).map(|()| preset).map_err(Into::into),
                Ok(target) => guard.addresses(&target).await,
            };
            admitted.map_err(|e| {
                guard.note(&e, "dial");
                refused(e)
            })
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures_util::future::BoxFuture;

    use super::*;
    use crate::config::CidrList;
    use crate::outbound::policy::AddressClass;

    /// Answers each lookup with the next scripted answer and records the names asked.
    struct Scripted {
        answers: Mutex<Vec<io::Result<Vec<&'static str>>>>,
        asked: Arc<Mutex<Vec<String>>>,
    }

    impl Lookup for Scripted {
        fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
            self.asked.lock().unwrap().push(host.to_owned());
            let next = self.answers.lock().unwrap().remove(0);
            Box::pin(async move {
                next.map(|ips| ips.iter().map(|ip| SocketAddr::new(ip.parse().unwrap(), port)).collect())
            })
        }
    }

    fn guard(answers: Vec<io::Result<Vec<&'static str>>>) -> (Guard, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let policy = Policy::new(false, &CidrList::default(), "127.0.0.1:8080".parse().unwrap());
        let lookup = Scripted { answers: Mutex::new(answers), asked: asked.clone() };
        (Guard::new(policy).unwrap().with_lookup(lookup), asked)
    }

    #[actix_rt::test]
    async fn a_name_resolving_only_to_public_addresses_passes() {
        let (g, asked) = guard(vec![Ok(vec!["8.8.8.8", "2606:4700::1111"])]);
        g.check("https://hooks.example.com/x").await.unwrap();
        assert_eq!(*asked.lock().unwrap(), ["hooks.example.com"]);
    }

    #[actix_rt::test]
    async fn a_name_with_one_private_address_among_public_ones_is_refused_not_retryable() {
        let (g, _) = guard(vec![Ok(vec!["8.8.8.8", "10.0.0.7"])]);
        let err = g.check("https://hooks.example.com/").await.unwrap_err();
        assert_eq!(err.refusal(), Some(Refusal::Address(AddressClass::Private)));
        assert!(!err.is_retryable());
        assert!(!err.to_string().contains("10.0.0.7"), "{err}");
    }

    #[actix_rt::test]
    async fn a_name_that_does_not_resolve_is_refused_like_a_private_one_and_only_a_slow_resolver_is_retried() {
        let (g, _) = guard(vec![
            Err(io::Error::other("NXDOMAIN")),
            Ok(vec![]),
            Ok(vec!["10.1.2.3"]),
            Err(io::Error::new(io::ErrorKind::TimedOut, "slow")),
        ]);
        for _ in 0..2 {
            let err = g.check("https://hooks.example.com/").await.unwrap_err();
            assert_eq!(err.refusal(), Some(Refusal::Unresolved));
            assert!(!err.is_retryable() && err.depends_on_resolution(), "{err}");
        }
        let private = g.check("https://hooks.example.com/").await.unwrap_err();
        assert!(!private.is_retryable() && private.depends_on_resolution());
        assert_eq!(private.saving("url").body().message, err_body(&CheckError::Refused(Refusal::Unresolved)));
        let slow = g.check("https://hooks.example.com/").await.unwrap_err();
        assert!(matches!(slow, CheckError::Dns(_)) && slow.is_retryable(), "{slow}");
        assert_eq!(slow.reason(), "dns_timeout");
        assert_eq!(slow.saving("url").code(), "forbidden_target");
    }

    fn err_body(e: &CheckError) -> String {
        e.saving("url").body().message
    }

    #[actix_rt::test]
    async fn a_refusal_of_the_urls_own_text_names_its_field_and_rule() {
        let (g, _) = guard(vec![]);
        let err = g.check("http://hooks.example.com/").await.unwrap_err();
        let answered = err.saving("url");
        assert_eq!(answered.code(), "invalid_argument");
        assert!(answered.to_string().starts_with("url: refused: "), "{answered}");
        assert!(answered.to_string().contains("SWITCHBOARD_PUSH_ALLOW_HTTP"), "{answered}");
    }

    #[actix_rt::test]
    async fn ip_literals_skip_dns_and_url_rules_come_before_any_lookup() {
        let (g, asked) = guard(vec![]);
        g.check("https://8.8.8.8/").await.unwrap();
        let err = g.check("https://[::1]/").await.unwrap_err();
        assert_eq!(err.refusal(), Some(Refusal::Address(AddressClass::Loopback)));
        let err = g.check("http://hooks.example.com/").await.unwrap_err();
        assert_eq!(err.refusal(), Some(Refusal::Scheme));
        assert!(asked.lock().unwrap().is_empty(), "no lookup for literals or refused URLs");
    }

    #[test]
    fn the_tls_configuration_builds_with_the_ring_provider() {
        let config = tls_config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
