//! Liveness and readiness, also while start-up still readies the database (the
//! listener is bound first, so a taken port is said at once).

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

/// Readiness while the database is still being readied: 503, until the application
/// takes the listener over.
pub async fn readyz_starting() -> HttpResponse {
    HttpResponse::ServiceUnavailable().json(HealthStatus { status: "unavailable" })
}

/// Any other request while the database is still being readied: 503 `unavailable`,
/// in the one error envelope.
pub async fn starting() -> HttpResponse {
    actix_web::ResponseError::error_response(&crate::error::Error::Unavailable(
        "starting: the database is not ready yet; retry shortly".into(),
    ))
}

/// The routes served while the database is still being readied.
pub fn starting_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz_starting))
        .default_service(web::to(starting));
}
