//! HTTP answers: every response by the surface that gave it and its status class, and
//! the 503s (the database unreachable, or the instance out of a bounded place) apart.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

label_values! {
    /// Which part of the server answered, from the request's path.
    Surface {
        /// The agent API (`/api/v1/agent/…`).
        Agent => "agent",
        /// The operator API (the rest of `/api/…`).
        Operator => "operator",
        /// Webhook intake (`/webhooks/w/…`).
        Intake => "intake",
        /// The Board (its pages, forms and assets).
        Board => "board",
        /// The MCP tools (`/mcp/…`).
        Mcp => "mcp",
        /// Health and metrics (`/healthz`, `/readyz`, `/metrics`).
        Probe => "probe",
        /// A path no route serves.
        Other => "other",
    }
}

label_values! {
    /// A status code's class.
    StatusClass {
        /// 100–199.
        Informational => "1xx",
        /// 200–299.
        Success => "2xx",
        /// 300–399.
        Redirection => "3xx",
        /// 400–499.
        ClientError => "4xx",
        /// 500–599.
        ServerError => "5xx",
    }
}

impl StatusClass {
    /// The class of `status` (a code outside 100–599 counts as a server error: nothing
    /// here sends one, and a proxy would treat it as broken).
    pub fn of(status: u16) -> StatusClass {
        match status {
            100..=199 => StatusClass::Informational,
            200..=299 => StatusClass::Success,
            300..=399 => StatusClass::Redirection,
            400..=499 => StatusClass::ClientError,
            _ => StatusClass::ServerError,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AnswerLabels {
    surface: Surface,
    class: StatusClass,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct SurfaceLabels {
    surface: Surface,
}

/// The answer families.
pub(super) struct AnswerFamilies {
    responses: Family<AnswerLabels, Counter>,
    unavailable: Family<SurfaceLabels, Counter>,
}

impl AnswerFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = AnswerFamilies { responses: Family::default(), unavailable: Family::default() };
        registry.register(
            "switchboard_http_responses",
            "HTTP answers this instance gave, by surface (from the path: agent, operator, intake, board, mcp, \
             probe, other for a path no route serves) and status class; a request whose client hung up first \
             gets none (switchboard_http_requests_abandoned_total)",
            families.responses.clone(),
        );
        registry.register(
            "switchboard_http_unavailable",
            "HTTP answers 503 (also in switchboard_http_responses_total as 5xx), by surface: the database \
             unreachable (a lost connection, an exhausted pool), /readyz while it is, or the instance out of \
             MCP sessions (switchboard_places_refused_total says which)",
            families.unavailable.clone(),
        );
        for &surface in Surface::ALL {
            for &class in StatusClass::ALL {
                drop(families.responses.get_or_create(&AnswerLabels { surface, class }));
            }
            drop(families.unavailable.get_or_create(&SurfaceLabels { surface }));
        }
        families
    }
}

impl Metrics {
    /// Counts an answer of `status` from `surface`.
    pub fn http_response(&self, surface: Surface, status: u16) {
        let class = StatusClass::of(status);
        self.inner.answers.responses.get_or_create(&AnswerLabels { surface, class }).inc();
        if status == 503 {
            self.inner.answers.unavailable.get_or_create(&SurfaceLabels { surface }).inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StatusClass;

    #[test]
    fn a_status_falls_in_its_hundred() {
        for (status, class) in [
            (101, "1xx"),
            (200, "2xx"),
            (204, "2xx"),
            (303, "3xx"),
            (404, "4xx"),
            (429, "4xx"),
            (500, "5xx"),
            (503, "5xx"),
            (600, "5xx"),
        ] {
            assert_eq!(StatusClass::of(status).as_str(), class, "{status}");
        }
    }
}
