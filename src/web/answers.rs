//! Counts every HTTP answer by the surface that gave it and its status class
//! (`switchboard_http_responses_total`, and the 503s in `switchboard_http_unavailable_total`).
//! The surface comes from the path's prefix; a path under no surface's prefix is the
//! Board's when a route matched it, else `other` (the 404 of an unknown path).

use actix_web::Error;
use actix_web::body::BoxBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};

use crate::metrics::{Metrics, Surface};

/// The surface whose prefix `path` has; `None`: none has (the Board's, or no route's).
pub fn surface_of(path: &str) -> Option<Surface> {
    let under = |prefix: &str| path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if under("/api/v1/agent") {
        Some(Surface::Agent)
    } else if under("/api") {
        Some(Surface::Operator)
    } else if under("/webhooks/w") {
        Some(Surface::Intake)
    } else if under("/mcp") {
        Some(Surface::Mcp)
    } else if ["/healthz", "/readyz", "/metrics"].contains(&path) {
        Some(Surface::Probe)
    } else {
        None
    }
}

/// The middleware body for `App::wrap_fn`: calls the service and counts its answer
/// (an error the service returned counts with the status it will be answered with).
pub fn count<S>(
    metrics: &Metrics,
    req: ServiceRequest,
    srv: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<BoxBody>, Error>> + use<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<BoxBody>, Error = Error>,
{
    let metrics = metrics.clone();
    let by_prefix = surface_of(req.path());
    let call = srv.call(req);
    async move {
        let out = call.await;
        let (status, routed) = match &out {
            Ok(res) => (res.status(), res.request().match_pattern().is_some()),
            Err(e) => (e.as_response_error().status_code(), false),
        };
        let surface = by_prefix.unwrap_or(if routed { Surface::Board } else { Surface::Other });
        metrics.http_response(surface, status.as_u16());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_surface_is_told_by_its_prefix_and_a_lookalike_is_not() {
        for (path, surface) in [
            ("/api/v1/agent/todos/claim-next", Some(Surface::Agent)),
            ("/api/v1/agent", Some(Surface::Agent)),
            ("/api/v1/agents", Some(Surface::Operator)),
            ("/api/v1/todos/x/retry", Some(Surface::Operator)),
            ("/api/v2/unknown", Some(Surface::Operator)),
            ("/webhooks/w/whk_abc", Some(Surface::Intake)),
            ("/webhooks/123/rules", None),
            ("/mcp/worker", Some(Surface::Mcp)),
            ("/mcpx", None),
            ("/healthz", Some(Surface::Probe)),
            ("/readyz", Some(Surface::Probe)),
            ("/metrics", Some(Surface::Probe)),
            ("/metrics/x", None),
            ("/todos", None),
            ("/", None),
        ] {
            assert_eq!(surface_of(path), surface, "{path}");
        }
    }
}
