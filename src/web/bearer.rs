//! The bearer credential of a request: the token its `Authorization: Bearer …` header
//! carries, when it has the expected prefix, and the services that resolve it. The REST
//! API's operator extractor and the agent extractor both REST and MCP use
//! ([`crate::agent_api::auth`]) read it here.

use actix_web::{HttpRequest, web};

use crate::error::Error;
use crate::service::Services;

/// The bearer token of `req` if it starts with `prefix` (and is at most 256 bytes).
pub fn bearer<'a>(req: &'a HttpRequest, prefix: &str) -> Option<&'a str> {
    let value = req.headers().get(actix_web::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(prefix) && token.len() <= 256).then_some(token)
}

/// The services registered with the application serving `req`.
pub fn services(req: &HttpRequest) -> Result<web::Data<Services>, Error> {
    req.app_data::<web::Data<Services>>().cloned().ok_or_else(|| Error::internal("services missing"))
}
