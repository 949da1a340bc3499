//! Bearer authentication: agents (`sbk_…` endpoint tokens) and operators (`sbo_…`
//! human tokens). Missing or bad credentials answer 401; a missing grant answers 403.

use std::future::Future;
use std::pin::Pin;

use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use chrono::Utc;

use super::AppState;
use crate::domain::grants::Verb;
use crate::domain::ids::EndpointId;
use crate::domain::tokens::{ENDPOINT_TOKEN_PREFIX, OPERATOR_TOKEN_PREFIX, sha256};
use crate::error::Error;
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;
use crate::ttl_cache::TtlCache;

/// An authenticated agent.
#[derive(Debug, Clone)]
pub struct Agent(pub AgentPrincipal);

impl Agent {
    /// Refuses with 403 unless the endpoint holds `verb`.
    pub fn require(&self, verb: Verb) -> Result<&AgentPrincipal, Error> {
        if self.0.may(verb) {
            Ok(&self.0)
        } else {
            Err(Error::Forbidden(format!("this endpoint is not granted {verb}")))
        }
    }
}

/// An authenticated human on the operator API.
#[derive(Debug, Clone)]
pub struct Operator(pub Reach);

fn bearer<'a>(req: &'a HttpRequest, prefix: &str) -> Option<&'a str> {
    let value = req.headers().get(actix_web::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(prefix) && token.len() <= 256).then_some(token)
}

fn state(req: &HttpRequest) -> Result<web::Data<AppState>, Error> {
    req.app_data::<web::Data<AppState>>().cloned().ok_or_else(|| Error::Internal("app state missing".into()))
}

impl FromRequest for Agent {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, ENDPOINT_TOKEN_PREFIX).map(str::to_owned);
        let state = state(req);
        Box::pin(async move {
            let token = token.ok_or(Error::Unauthenticated)?;
            let state = state?;
            let key = sha256(token.as_bytes());
            if let Some(hit) = state.auth_cache.get(&key) {
                return Ok(Agent(hit));
            }
            let principal = state.store.authenticate_endpoint(&token).await?.ok_or(Error::Unauthenticated)?;
            state.auth_cache.put(key, principal.clone());
            Ok(Agent(principal))
        })
    }
}

impl FromRequest for Operator {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, OPERATOR_TOKEN_PREFIX).map(str::to_owned);
        let state = state(req);
        Box::pin(async move {
            let token = token.ok_or(Error::Unauthenticated)?;
            let reach = state?.store.authenticate_operator(&token).await?.ok_or(Error::Unauthenticated)?;
            Ok(Operator(reach))
        })
    }
}

/// A short-lived cache of verified endpoint tokens, so a claim/complete cycle costs one
/// database round trip per call instead of two. Bounded in size and time; revocation
/// on this instance evicts at once, and every state-changing statement re-checks the
/// todo's own state, so a stale entry can at most read or create for `ttl` after a
/// revocation on another instance (creation also re-checks the endpoint in SQL).
#[derive(Clone)]
pub struct AuthCache(TtlCache<[u8; 32], AgentPrincipal>);

/// Most entries held before the cache is cleared (tokens are few; this only bounds
/// memory against a flood of distinct valid tokens).
const AUTH_CACHE_MAX: usize = 10_000;

impl AuthCache {
    /// A cache trusting entries for `ttl` (zero disables caching).
    pub fn new(ttl: Duration) -> Self {
        AuthCache(TtlCache::new(ttl, AUTH_CACHE_MAX))
    }

    fn get(&self, key: &[u8; 32]) -> Option<AgentPrincipal> {
        self.0.get(key).filter(|p| p.expires_at.is_none_or(|e| e > Utc::now()))
    }

    fn put(&self, key: [u8; 32], principal: AgentPrincipal) {
        self.0.put(key, principal);
    }

    /// Forgets every cached token of `endpoint` (after a revocation).
    pub fn evict(&self, endpoint: EndpointId) {
        self.0.retain(|_, p| p.endpoint_id != endpoint);
    }
}
