//! Counts requests whose client hung up before the answer was ready.
//!
//! actix-web drops a request's handler future when its connection fails (a client that
//! resets the connection). Whatever the handler was awaiting is cancelled with it, so
//! committing store calls run on tasks of their own (`Store::to_completion`); this
//! middleware only makes such hang-ups visible (`switchboard_http_requests_abandoned_total`).

use actix_web::Error;
use actix_web::body::BoxBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};

use crate::metrics::Metrics;

/// Counts on drop unless told the answer was produced.
struct Watch {
    metrics: Metrics,
    answered: bool,
}

impl Watch {
    /// The service answered: nothing to count.
    fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if !self.answered {
            self.metrics.request_abandoned();
        }
    }
}

/// The middleware body for `App::wrap_fn`: calls the service and counts the request as
/// abandoned if its future is dropped before the service answered.
pub fn watch<S>(
    metrics: &Metrics,
    req: ServiceRequest,
    srv: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<BoxBody>, Error>> + use<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<BoxBody>, Error = Error>,
{
    let mut watch = Watch { metrics: metrics.clone(), answered: false };
    let call = srv.call(req);
    async move {
        let out = call.await;
        watch.answered();
        out
    }
}
