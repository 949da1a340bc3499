//! Liveness and readiness.

use actix_web::{HttpResponse, web};
use serde_json::json;

use super::AppState;

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "alive")))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// Readiness: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, description = "ready"), (status = 503, description = "database unavailable")))]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    match state.store.ping().await {
        Ok(()) => HttpResponse::Ok().json(json!({"status": "ready"})),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            HttpResponse::ServiceUnavailable().json(json!({"status": "unavailable"}))
        }
    }
}
