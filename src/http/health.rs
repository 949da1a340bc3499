//! Liveness and readiness.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::service::{Services, health};

/// What the health routes answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthStatus {
    /// `ok` (alive), `ready`, or `unavailable` (the database does not answer).
    pub status: &'static str,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "alive", body = HealthStatus)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(HealthStatus { status: "ok" })
}

/// Readiness: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, description = "ready", body = HealthStatus),
              (status = 503, description = "database unavailable", body = HealthStatus)))]
pub async fn readyz(s: web::Data<Services>) -> HttpResponse {
    match health::ready(&s).await {
        Ok(()) => HttpResponse::Ok().json(HealthStatus { status: "ready" }),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            HttpResponse::ServiceUnavailable().json(HealthStatus { status: "unavailable" })
        }
    }
}
