//! What every request to `/mcp/{slug}` passes before rmcp sees it:
//!
//! - the method: GET, POST or DELETE, else 405 with `Allow` ([`MCP_METHODS`]);
//! - the endpoint's `sbk_…` bearer, resolved exactly as the REST API resolves it (the
//!   NOTIFY-coherent token cache, so a revocation on any instance refuses the next
//!   request), and of this slug's endpoint: a missing, revoked, expired or foreign token
//!   answers 401 with the error envelope before any MCP exchange;
//! - a POST body of at most 1 MiB arriving within the read timeout, read by the REST API's
//!   own reader (413 / 408 with the error envelope);
//! - a session id of another endpoint answers 404, as an unknown session does (both
//!   counted as refused, `unknown_session`);
//! - an `initialize` that would open a session takes a place among the bounded sessions
//!   first (refused with 429 when its endpoint holds its most or its owner scope its fair
//!   share, 503 when the instance is full; each refusal counted), which the session keeps
//!   until it closes ([`super::sessions`]);
//! - a session's tool call is cancelled if its client hangs up before the answer
//!   ([`super::hangup`]).
//!
//! The caller (endpoint and services) rides with the request to the tool handler in the
//! request's extensions ([`hand_over`]).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};

use super::hangup::{Call, Watched};
use super::sessions::{self, Registry, Sessions};
use crate::agent_api::auth::Agent;
use crate::error::{Error, TokenKind};
use crate::metrics::{PlaceKind, PlaceRefusal};
use crate::service::Services;
use crate::store::endpoints::AgentPrincipal;
use crate::web::body_read::{declared_length, read_bounded, read_timeout};
use crate::web::json_body::BODY_LIMIT;

/// The header that carries a session's id (Streamable HTTP).
pub const SESSION_HEADER: &str = "mcp-session-id";

/// Who calls a tool: the authenticated endpoint of this request, and the services.
#[derive(Clone)]
pub struct ToolCaller {
    /// The endpoint whose bearer the request carried, with its grants as of this request.
    pub me: AgentPrincipal,
    /// The services every tool calls through.
    pub services: web::Data<Services>,
}

/// The middleware on `/mcp/{slug}`: see the module's documentation.
pub async fn gate(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    check_method(req.method())?;
    let me = authenticate(req.request()).await?;
    let registry =
        req.app_data::<web::Data<Registry>>().cloned().ok_or_else(|| Error::internal("mcp registry missing"))?;
    let services = req.app_data::<web::Data<Services>>().cloned().ok_or_else(|| Error::internal("services missing"))?;
    let body = if req.method() == Method::POST { Some(read_body(&mut req).await?) } else { None };
    let session = req.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let owner = session.as_deref().map(|id| registry.owner(id));
    if owner.flatten().is_some_and(|owner| owner != me.endpoint_id) {
        // Another endpoint's session is not this one's to use: answered as unknown.
        services.metrics().place_refused(PlaceKind::McpSession, PlaceRefusal::UnknownSession);
        return Err(Error::NotFound.into());
    }
    let opening = session.is_none() && body.as_deref().is_some_and(is_initialize);
    let place = if opening {
        let place = registry.reserve(me.endpoint_id, me.scope_id).map_err(|refused| {
            services.metrics().place_refused(PlaceKind::McpSession, refused.reason());
            Error::from(refused)
        })?;
        Some(place)
    } else {
        None
    };
    let call = match (&session, &body, req.app_data::<web::Data<Sessions>>()) {
        (Some(id), Some(bytes), Some(all)) => Call::of(bytes, id, all.clone().into_inner()),
        _ => None,
    };
    if let Some(bytes) = body {
        req.set_payload(actix_web::dev::Payload::from(bytes));
    }
    let metrics = services.metrics().clone();
    req.extensions_mut().insert(ToolCaller { me, services });
    let res = sessions::opening(place, next.call(req)).await?;
    if owner == Some(None) && res.status() == actix_web::http::StatusCode::NOT_FOUND {
        // A session this instance does not hold (closed, idled out, or opened on another
        // instance: a balancer that does not route by `Mcp-Session-Id`), refused by rmcp.
        metrics.place_refused(PlaceKind::McpSession, PlaceRefusal::UnknownSession);
    }
    Ok(res.map_body(|_, body| Watched::new(body.boxed(), call)))
}

/// The endpoint of the request's bearer, if it is this slug's: else 401, whose text names
/// the token `/mcp/{slug}` takes and is the same whether the token is missing, unknown,
/// revoked, of another kind or another endpoint's, or the slug names no endpoint (so
/// that nothing here tells which slugs exist).
async fn authenticate(req: &HttpRequest) -> Result<AgentPrincipal, Error> {
    let refused = |e: Error| match e {
        Error::Unauthenticated | Error::CredentialsExpected(_) => {
            Error::CredentialsExpected(TokenKind::McpEndpointToken)
        }
        other => other,
    };
    let Agent(me) = Agent::extract(req).await.map_err(refused)?;
    // A token of another endpoint is refused like a bad one: the URL names the endpoint.
    // A slug no endpoint could have (NUL, a segment that was not UTF-8: see
    // `crate::web::path_name`) is a bad name, refused as every route refuses one.
    let slug = req.match_info().get("slug").unwrap_or_default();
    if slug != me.slug {
        return Err(match crate::web::path_name::refusal(slug) {
            Some(why) => Error::invalid("path", why),
            None => Error::CredentialsExpected(TokenKind::McpEndpointToken),
        });
    }
    Ok(me)
}

/// The methods `/mcp/{slug}` takes (Streamable HTTP with sessions: POST a message, GET a
/// session's stream, DELETE a session), as its `Allow` header lists them.
pub const MCP_METHODS: &str = "GET, POST, DELETE";

/// Any other method answers 405 with that `Allow` and the error envelope, before the
/// bearer is read, as a REST route answers a method it does not take before its
/// extractors run.
fn check_method(method: &Method) -> Result<(), Error> {
    if [Method::GET, Method::POST, Method::DELETE].contains(method) {
        Ok(())
    } else {
        Err(Error::MethodNotAllowed(MCP_METHODS.to_owned()))
    }
}

/// The whole body, bounded as the REST API bounds its JSON bodies.
async fn read_body(req: &mut ServiceRequest) -> Result<actix_web::web::Bytes, Error> {
    let declared = declared_length(req.request());
    let timeout = read_timeout(req.request());
    let payload = req.take_payload();
    Ok(read_bounded(payload, declared, BODY_LIMIT, timeout).await?.freeze())
}

/// Whether `body` is an `initialize` request (the one message that opens a session).
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body).is_ok_and(|m| m.method.as_deref() == Some("initialize"))
}

/// Hands the caller the gate authenticated to rmcp, which carries it to the tool handler
/// (rmcp-actix-web's `on_request` hook).
pub fn hand_over(req: &HttpRequest, extensions: &mut rmcp::model::Extensions) {
    if let Some(caller) = req.extensions().get::<ToolCaller>() {
        extensions.insert(caller.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::{MCP_METHODS, Method, check_method, is_initialize};

    #[test]
    fn a_method_streamable_http_does_not_use_is_405_listing_the_three_it_does() {
        use actix_web::ResponseError;
        for fine in [Method::GET, Method::POST, Method::DELETE] {
            assert!(check_method(&fine).is_ok(), "{fine}");
        }
        for other in [Method::PUT, Method::PATCH, Method::HEAD, Method::OPTIONS] {
            let resp = check_method(&other).err().map(|e| e.error_response()).expect("refused");
            assert_eq!(resp.status(), actix_web::http::StatusCode::METHOD_NOT_ALLOWED, "{other}");
            assert_eq!(resp.headers().get("allow").and_then(|v| v.to_str().ok()), Some(MCP_METHODS), "{other}");
        }
    }

    #[test]
    fn only_an_initialize_request_opens_a_session() {
        assert!(is_initialize(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#));
        for other in [
            &br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#,
            b"not json",
        ] {
            assert!(!is_initialize(other), "{}", String::from_utf8_lossy(other));
        }
    }
}
