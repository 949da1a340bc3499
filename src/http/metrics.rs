//! `GET /metrics`: Prometheus text for a scraper holding `SWITCHBOARD_METRICS_TOKEN`
//! as a bearer token (checked by [`crate::service::health::metrics`]).

use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::{ErrorEnvelope, Result};
use crate::metrics::CONTENT_TYPE;
use crate::service::{Services, health};

/// The exposition, for the bearer of the metrics token.
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain"),
              (status = 401, body = ErrorEnvelope)))]
pub async fn scrape(s: web::Data<Services>, req: HttpRequest) -> Result<HttpResponse> {
    let text = health::metrics(&s, bearer(&req)).await?;
    Ok(HttpResponse::Ok().content_type(CONTENT_TYPE).body(text))
}

/// The token of an `Authorization: Bearer …` header (scheme in any case).
fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn with(auth: &str) -> HttpRequest {
        TestRequest::default().insert_header(("Authorization", auth)).to_http_request()
    }

    #[test]
    fn the_bearer_token_is_read_in_any_case_and_nothing_else_is() {
        assert_eq!(bearer(&with("Bearer abc")), Some("abc"));
        assert_eq!(bearer(&with("bearer abc")), Some("abc"));
        assert_eq!(bearer(&with("Basic abc")), None);
        assert_eq!(bearer(&with("abc")), None);
        assert_eq!(bearer(&TestRequest::default().to_http_request()), None);
    }
}
