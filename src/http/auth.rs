//! Bearer authentication: agents (`sbk_…` endpoint tokens) and operators (`sbo_…`
//! human tokens). Missing or bad credentials answer 401; a missing grant answers 403.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};

mod cache;
mod changes;
pub mod confirm;

pub use cache::AuthCache;
pub use changes::{AUTH_CHANGES_CHANNEL, AUTH_LISTENER_NAME, AuthListener};

use super::AppState;
use crate::domain::grants::Verb;
use crate::domain::tokens::{ENDPOINT_TOKEN_PREFIX, OPERATOR_TOKEN_PREFIX, sha256};
use crate::error::Error;
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;

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

/// An authenticated human on the operator API. Operator tokens are not cached (nor are
/// Board sessions): every request checks the database, so `revoke-operator-tokens` and
/// `set-password` take effect on the next request on every instance.
#[derive(Debug, Clone)]
pub struct Operator(pub Reach);

fn bearer<'a>(req: &'a HttpRequest, prefix: &str) -> Option<&'a str> {
    let value = req.headers().get(actix_web::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(prefix) && token.len() <= 256).then_some(token)
}

fn state(req: &HttpRequest) -> Result<web::Data<AppState>, Error> {
    req.app_data::<web::Data<AppState>>().cloned().ok_or_else(|| Error::internal("app state missing"))
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
            // Taken before the lookup: an eviction meanwhile means its answer may be stale.
            let generation = state.auth_cache.generation();
            let principal = state.store.authenticate_endpoint(&token).await?.ok_or(Error::Unauthenticated)?;
            state.auth_cache.put(generation, key, principal.clone());
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
