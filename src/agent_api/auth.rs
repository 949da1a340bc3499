//! Bearer authentication of agents: the `sbk_…` endpoint token of the `Authorization`
//! header, resolved by [`crate::service::auth`] (the NOTIFY-coherent token cache, so a
//! revocation on any instance refuses the next request). The REST API's agent routes
//! take it as an extractor, and the MCP gate extracts it before any MCP exchange.
//! Missing or bad credentials answer 401; what the agent may do is the services' to
//! decide.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};

use crate::domain::tokens::ENDPOINT_TOKEN_PREFIX;
use crate::error::{Error, TokenKind};
use crate::service::auth;
use crate::store::endpoints::AgentPrincipal;
use crate::web::bearer::{bearer, services};

/// An authenticated agent.
#[derive(Debug, Clone)]
pub struct Agent(pub AgentPrincipal);

impl FromRequest for Agent {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req, ENDPOINT_TOKEN_PREFIX).map(str::to_owned);
        let services = services(req);
        Box::pin(async move {
            let token = token.ok_or(Error::CredentialsExpected(TokenKind::EndpointToken))?;
            Ok(Agent(auth::endpoint(&*services?, &token).await.map_err(|e| e.expecting(TokenKind::EndpointToken))?))
        })
    }
}
