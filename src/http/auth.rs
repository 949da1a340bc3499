//! Bearer authentication of operators (`sbo_…` human tokens), taken from the
//! `Authorization` header and resolved by [`crate::service::auth`]. Missing or bad
//! credentials answer 401; what the caller may do is the services' to decide. Agents
//! (`sbk_…` endpoint tokens) are authenticated by [`crate::agent_api::auth::Agent`],
//! which the MCP tools use too.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};

use crate::domain::tokens::OPERATOR_TOKEN_PREFIX;
use crate::error::{Error, TokenKind};
use crate::service::auth;
use crate::store::tenancy::Reach;
use crate::web::bearer::{bearer, services};

/// An authenticated human on the operator API. Operator tokens are not cached (nor are
/// Board sessions): every request checks the database, so `revoke-operator-tokens` and
/// `set-password` take effect on the next request on every instance.
#[derive(Debug, Clone)]
pub struct Operator(pub Reach);

impl FromRequest for Operator {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, OPERATOR_TOKEN_PREFIX).map(str::to_owned);
        let services = services(req);
        Box::pin(async move {
            let token = token.ok_or(Error::CredentialsExpected(TokenKind::OperatorToken))?;
            Ok(Operator(auth::operator(&*services?, &token).await.map_err(|e| e.expecting(TokenKind::OperatorToken))?))
        })
    }
}
