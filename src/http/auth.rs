//! Bearer authentication: agents (`sbk_…` endpoint tokens) and operators (`sbo_…`
//! human tokens), taken from the `Authorization` header and resolved by
//! [`crate::service::auth`]. Missing or bad credentials answer 401; what the caller may
//! do is the services' to decide.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};

use crate::domain::tokens::{ENDPOINT_TOKEN_PREFIX, OPERATOR_TOKEN_PREFIX};
use crate::error::Error;
use crate::service::{Services, auth};
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;

/// An authenticated agent.
#[derive(Debug, Clone)]
pub struct Agent(pub AgentPrincipal);

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

fn services(req: &HttpRequest) -> Result<web::Data<Services>, Error> {
    req.app_data::<web::Data<Services>>().cloned().ok_or_else(|| Error::internal("services missing"))
}

impl FromRequest for Agent {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, ENDPOINT_TOKEN_PREFIX).map(str::to_owned);
        let services = services(req);
        Box::pin(async move {
            let token = token.ok_or(Error::Unauthenticated)?;
            Ok(Agent(auth::endpoint(&*services?, &token).await?))
        })
    }
}

impl FromRequest for Operator {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, OPERATOR_TOKEN_PREFIX).map(str::to_owned);
        let services = services(req);
        Box::pin(async move {
            let token = token.ok_or(Error::Unauthenticated)?;
            Ok(Operator(auth::operator(&*services?, &token).await?))
        })
    }
}
