//! `GET /metrics`: Prometheus text for a scraper holding `SWITCHBOARD_METRICS_TOKEN`.
//! Without a configured token every request is refused, so metrics are never public
//! by accident.

use actix_web::{HttpRequest, HttpResponse, web};
use subtle::ConstantTimeEq;

use super::AppState;
use crate::error::{Error, ErrorEnvelope, Result};
use crate::metrics::CONTENT_TYPE;

/// The exposition, for the bearer of the metrics token.
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain"),
              (status = 401, body = ErrorEnvelope)))]
pub async fn scrape(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse> {
    if !authorized(state.metrics_token.as_deref(), &req) {
        return Err(Error::Unauthenticated);
    }
    let text = state.metrics.render().map_err(|e| Error::internal_from("metrics encoding", e))?;
    Ok(HttpResponse::Ok().content_type(CONTENT_TYPE).body(text))
}

/// Whether the request carries exactly the configured token (compared in constant time).
fn authorized(expected: Option<&str>, req: &HttpRequest) -> bool {
    let Some(expected) = expected else { return false };
    let presented = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    presented.is_some_and(|token| bool::from(token.as_bytes().ct_eq(expected.as_bytes())))
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn with(auth: &str) -> HttpRequest {
        TestRequest::default().insert_header(("Authorization", auth)).to_http_request()
    }

    #[test]
    fn only_the_exact_bearer_token_is_authorized() {
        assert!(authorized(Some(TOKEN), &with(&format!("Bearer {TOKEN}"))));
        assert!(authorized(Some(TOKEN), &with(&format!("bearer {TOKEN}"))));
        assert!(!authorized(Some(TOKEN), &with(&format!("Bearer {TOKEN}x"))));
        assert!(!authorized(Some(TOKEN), &with(&format!("Bearer {}", &TOKEN[1..]))));
        assert!(!authorized(Some(TOKEN), &with(&format!("Basic {TOKEN}"))));
        assert!(!authorized(Some(TOKEN), &with(TOKEN)));
        assert!(!authorized(Some(TOKEN), &TestRequest::default().to_http_request()));
    }

    #[test]
    fn without_a_configured_token_nothing_is_authorized() {
        assert!(!authorized(None, &with("Bearer ")));
        assert!(!authorized(None, &with(&format!("Bearer {TOKEN}"))));
    }
}
