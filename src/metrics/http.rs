//! What arrives over HTTP: webhook deliveries accepted or refused for their signature,
//! requests whose client hung up, requests refused a bounded place.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

label_values! {
    /// A kind of bounded place an instance hands out.
    PlaceKind {
        /// An MCP session (`initialize`).
        McpSession => "mcp_session",
        /// A long-poll `claim-next`'s place among the waiting requests.
        LongPoll => "long_poll",
    }
}

label_values! {
    /// Why a request got no place.
    PlaceRefusal {
        /// Its owner scope held its fair share of the instance's places.
        ScopeShare => "scope_share",
        /// Its endpoint held its most MCP sessions.
        EndpointShare => "endpoint_share",
        /// The instance held its most places.
        InstanceFull => "instance_full",
        /// A request named an MCP session this instance does not hold (never opened
        /// here, closed, idled out, or another endpoint's): answered 404.
        UnknownSession => "unknown_session",
    }
}

impl PlaceKind {
    /// The refusals a place of this kind can meet (long-poll places have no bound per
    /// endpoint).
    fn refusals(self) -> &'static [PlaceRefusal] {
        match self {
            PlaceKind::McpSession => PlaceRefusal::ALL,
            // A long poll holds no place between requests, so none is unknown.
            PlaceKind::LongPoll => &[PlaceRefusal::ScopeShare, PlaceRefusal::InstanceFull],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PlaceRefusedLabels {
    place: PlaceKind,
    reason: PlaceRefusal,
}

/// The families of requests.
pub(super) struct HttpFamilies {
    webhook_deliveries: Counter,
    webhook_verify_failures: Counter,
    requests_abandoned: Counter,
    places_refused: Family<PlaceRefusedLabels, Counter>,
}

impl HttpFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = HttpFamilies {
            webhook_deliveries: Counter::default(),
            webhook_verify_failures: Counter::default(),
            requests_abandoned: Counter::default(),
            places_refused: Family::default(),
        };
        registry.register(
            "switchboard_webhook_deliveries",
            "Webhook deliveries accepted (verified or token-trusted) and recorded",
            families.webhook_deliveries.clone(),
        );
        registry.register(
            "switchboard_webhook_verify_failures",
            "Webhook deliveries refused because their signature did not verify",
            families.webhook_verify_failures.clone(),
        );
        registry.register(
            "switchboard_http_requests_abandoned",
            "HTTP requests whose client hung up before the answer was ready (their work still completes)",
            families.requests_abandoned.clone(),
        );
        registry.register(
            "switchboard_places_refused",
            "Requests refused a bounded place on this instance (an MCP session, a long-poll wait), by place \
             and why: their owner scope held its fair share, their endpoint its most sessions, the instance \
             its most places, or (MCP) the request named a session this instance does not hold (closed, idled \
             out, or opened on another instance: a balancer not routing by Mcp-Session-Id)",
            families.places_refused.clone(),
        );
        for &place in PlaceKind::ALL {
            for &reason in place.refusals() {
                drop(families.places_refused.get_or_create(&PlaceRefusedLabels { place, reason }));
            }
        }
        families
    }
}

impl Metrics {
    /// Counts an accepted webhook delivery.
    pub fn webhook_delivery(&self) {
        self.inner.http.webhook_deliveries.inc();
    }

    /// Counts a webhook delivery refused for its signature.
    pub fn webhook_verify_failure(&self) {
        self.inner.http.webhook_verify_failures.inc();
    }

    /// Counts a request whose client hung up before its answer was ready.
    pub fn request_abandoned(&self) {
        self.inner.http.requests_abandoned.inc();
    }

    /// Counts a request refused a bounded place.
    pub fn place_refused(&self, place: PlaceKind, reason: PlaceRefusal) {
        self.inner.http.places_refused.get_or_create(&PlaceRefusedLabels { place, reason }).inc();
    }
}
