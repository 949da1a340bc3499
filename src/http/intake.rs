//! `POST /webhooks/w/{ingest_token}`: the front door for providers. Finds the webhook
//! first (an unknown token reads no body), reads the body within its bounds, and hands
//! both to [`crate::service::intake`].

use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::service::intake::{self, IngestAnswer};
use crate::web::body_read::{ReadTimeout, declared_length, read_bounded};

/// Largest delivery accepted.
pub const INGEST_BODY_LIMIT: usize = 5 * 1024 * 1024;

/// Receives one delivery.
#[utoipa::path(post, path = "/webhooks/w/{ingest_token}", tag = "intake",
    params(("ingest_token" = String, Path, description = "the webhook's ingest token")),
    responses((status = 202, body = IngestAnswer), (status = 401, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 408, body = ErrorEnvelope), (status = 413, body = ErrorEnvelope), (status = 503, body = ErrorEnvelope)))]
pub async fn ingest(
    s: web::Data<Services>,
    timeout: web::Data<ReadTimeout>,
    req: HttpRequest,
    token: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse> {
    let target = intake::webhook(&s, &token).await?;
    let body = read_bounded(payload, declared_length(&req), INGEST_BODY_LIMIT, timeout.0).await?;
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let answer = intake::receive(&s, &target, &token, headers, &body).await?;
    Ok(HttpResponse::Accepted().json(answer))
}
