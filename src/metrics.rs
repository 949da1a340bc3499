//! Prometheus metrics (SPEC 12): one registry per process, served at `/metrics`.
//! Labels are closed enums, never ids, so a family's size is fixed; every label set is
//! created at zero up front, so a scrape shows each series before its first event.

use std::fmt::Write as _;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::domain::admission::Deferral;
use crate::hooks::rules::body::HookEvent;
use crate::hooks::rules::hook::HookDisabledReason;
use crate::hooks::rules::retry::AttemptResult;
use crate::sinks::rules::vocabulary::SinkEvent;
use crate::store::signals::Emitter;

/// The content type of what [`Metrics::render`] produces (Prometheus text 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Declares a label value enum with its exposition strings.
macro_rules! label_values {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The exposition form.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl EncodeLabelValue for $name {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
                encoder.write_str(self.as_str())
            }
        }
    };
}

label_values! {
    /// What became of one ring of one hook.
    RingOutcome {
        /// A 2xx answer.
        Delivered => "delivered",
        /// Every attempt failed, or a failure was not retryable.
        Failed => "failed",
        /// Never attempted: over the hook's rate or the dispatcher's capacity.
        Dropped => "dropped",
    }
}

/// Label values the hook channel already names (one spelling, in `crate::hooks::rules`).
macro_rules! label_values_of {
    ($($name:ty),+) => {$(
        impl EncodeLabelValue for $name {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
                encoder.write_str(self.as_str())
            }
        }
    )+};
}

label_values_of!(HookEvent, AttemptResult, HookDisabledReason, Deferral);

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RingLabels {
    r#type: HookEvent,
    outcome: RingOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AttemptLabels {
    result: AttemptResult,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DisabledLabels {
    reason: HookDisabledReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DeferredLabels {
    reason: Deferral,
}

/// Reads the store emitter's drop count at scrape time (the emitter counts on its own;
/// a second counter would only drift from it).
struct SignalsDropped(Emitter);

impl std::fmt::Debug for SignalsDropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignalsDropped")
    }
}

impl Collector for SignalsDropped {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counter = ConstCounter::new(self.0.dropped());
        let metric = encoder.encode_descriptor(
            "switchboard_signals_dropped",
            "Signals (todo ready, dead lettered) dropped because a recipient's mailbox was full or gone",
            None,
            counter.metric_type(),
        )?;
        counter.encode(metric)
    }
}

label_values! {
    /// An agent verb that takes a batch.
    BatchVerb {
        /// `claim-next` with a `limit` above 1.
        ClaimNext => "claim_next",
        /// `POST /api/v1/agent/todos/complete`.
        Complete => "complete",
        /// `POST /api/v1/agent/todos/fail`.
        Fail => "fail",
        /// `POST /api/v1/agent/todos/batch`.
        CreateTodo => "create_todo",
    }
}

label_values! {
    /// What became of one batch request as a whole.
    BatchCallOutcome {
        /// Answered (each item with its own answer).
        Answered => "answered",
        /// Refused as a whole (its grant, its size, a malformed item, the database).
        Refused => "refused",
    }
}

label_values! {
    /// What one item of a batch came to: done, or the error code the single verb gives.
    BatchItemOutcome {
        /// Done as asked (a todo claimed, completed, failed or created, or an
        /// idempotency key's live todo returned).
        Ok => "ok",
        /// `not_found`.
        NotFound => "not_found",
        /// `conflict`.
        Conflict => "conflict",
        /// `invalid_argument`.
        InvalidArgument => "invalid_argument",
        /// Any other error code.
        Other => "other",
    }
}

impl BatchItemOutcome {
    /// The outcome an item's error code stands for.
    pub fn of_code(code: &str) -> Self {
        match code {
            "not_found" => BatchItemOutcome::NotFound,
            "conflict" => BatchItemOutcome::Conflict,
            "invalid_argument" => BatchItemOutcome::InvalidArgument,
            _ => BatchItemOutcome::Other,
        }
    }
}

label_values! {
    /// A single agent verb whose concurrent requests are committed as a group
    /// (`service::group_commit`).
    GroupCommitVerb {
        /// `claim-next` without a `limit` above 1.
        ClaimNext => "claim_next",
        /// `POST /api/v1/agent/todos/{id}/complete`.
        Complete => "complete",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct GroupCommitLabels {
    verb: GroupCommitVerb,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct BatchCallLabels {
    verb: BatchVerb,
    outcome: BatchCallOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct BatchItemLabels {
    verb: BatchVerb,
    outcome: BatchItemOutcome,
}

label_values! {
    /// What became of one outbox row's attempt at a sink.
    SinkOutcome {
        /// The sink took it.
        Sent => "sent",
        /// It went out inside a coalesced message.
        Coalesced => "coalesced",
        /// The attempt failed; another is scheduled.
        Retried => "retried",
        /// The sink's budget held it.
        Held => "held",
        /// Apprise reached only some targets, on the last try.
        Partial => "partial",
        /// No attempt will reach the sink.
        Undeliverable => "undeliverable",
    }
}

impl EncodeLabelValue for SinkEvent {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

label_values! {
    /// Why a long-poll `claim-next` answered without a claim.
    EmptyWait {
        /// Its `wait_seconds` passed with nothing it could claim.
        TimedOut => "timed_out",
        /// The instance already held its most waiting requests: answered at once.
        Full => "full",
        /// The server was stopping.
        Shutdown => "shutdown",
        /// Its owner scope already held its fair share of the waiting requests: answered
        /// at once.
        ScopeShare => "scope_share",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct EmptyWaitLabels {
    reason: EmptyWait,
}

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
    }
}

impl PlaceKind {
    /// The refusals a place of this kind can meet (long-poll places have no bound per
    /// endpoint).
    fn refusals(self) -> &'static [PlaceRefusal] {
        match self {
            PlaceKind::McpSession => PlaceRefusal::ALL,
            PlaceKind::LongPoll => &[PlaceRefusal::ScopeShare, PlaceRefusal::InstanceFull],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PlaceRefusedLabels {
    place: PlaceKind,
    reason: PlaceRefusal,
}

/// The `reason` of an outbound refusal: one of
/// [`crate::outbound::refusal::REFUSAL_REASONS`].
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabels {
    listener: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabels {
    event: SinkEvent,
    outcome: SinkOutcome,
}

struct Inner {
    registry: Registry,
    rings: Family<RingLabels, Counter>,
    attempts: Family<AttemptLabels, Counter>,
    hooks_disabled: Family<DisabledLabels, Counter>,
    webhook_deliveries: Counter,
    webhook_verify_failures: Counter,
    requests_abandoned: Counter,
    hook_change_notices: Counter,
    listeners_listening: Family<ListenerLabels, Gauge>,
    rings_in_flight: Gauge,
    sink_sends: Family<SinkLabels, Counter>,
    outbox_depth: Gauge,
    outbox_oldest: Gauge<f64, std::sync::atomic::AtomicU64>,
    claims_deferred: Family<DeferredLabels, Counter>,
    digest_ticks: Counter,
    batch_calls: Family<BatchCallLabels, Counter>,
    batch_items: Family<BatchItemLabels, Counter>,
    group_commit_runs: Family<GroupCommitLabels, Counter>,
    group_commit_requests: Family<GroupCommitLabels, Counter>,
    group_commit_waiting: Family<GroupCommitLabels, Gauge>,
    group_commit_alone: Family<GroupCommitLabels, Counter>,
    long_poll_waiters: Gauge,
    long_poll_wakeups: Counter,
    long_poll_empty: Family<EmptyWaitLabels, Counter>,
    places_refused: Family<PlaceRefusedLabels, Counter>,
    outbound_refused: Family<RefusedLabels, Counter>,
}

/// The process's metrics. Cheap to clone; every clone counts into the same registry.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    /// A registry with every family, reading dropped signals from `signals`.
    pub fn new(signals: &Emitter) -> Self {
        let mut registry = Registry::default();
        let rings = Family::<RingLabels, Counter>::default();
        let attempts = Family::<AttemptLabels, Counter>::default();
        let hooks_disabled = Family::<DisabledLabels, Counter>::default();
        let webhook_deliveries = Counter::default();
        let webhook_verify_failures = Counter::default();
        let requests_abandoned = Counter::default();
        // The registry appends `_total` to counter names.
        registry.register(
            "switchboard_notify_hook_notifications",
            "Notifications to notify hooks, by event type and outcome",
            rings.clone(),
        );
        registry.register(
            "switchboard_notify_hook_attempts",
            "Notify-hook delivery attempts, by result",
            attempts.clone(),
        );
        registry.register(
            "switchboard_notify_hooks_disabled",
            "Notify hooks switched off by Switchboard, by reason",
            hooks_disabled.clone(),
        );
        registry.register(
            "switchboard_webhook_deliveries",
            "Webhook deliveries accepted (verified or token-trusted) and recorded",
            webhook_deliveries.clone(),
        );
        registry.register(
            "switchboard_webhook_verify_failures",
            "Webhook deliveries refused because their signature did not verify",
            webhook_verify_failures.clone(),
        );
        registry.register(
            "switchboard_http_requests_abandoned",
            "HTTP requests whose client hung up before the answer was ready (their work still completes)",
            requests_abandoned.clone(),
        );
        let hook_change_notices = Counter::default();
        registry.register(
            "switchboard_notify_hook_change_notices",
            "Hook change notices from the database (NOTIFY) applied to this instance's hook cache",
            hook_change_notices.clone(),
        );
        let listeners_listening = Family::<ListenerLabels, Gauge>::default();
        registry.register(
            "switchboard_change_listener_listening",
            "1 while this instance's change listener (LISTEN session, by its session name) is \
             listening, 0 while it is away: what it keeps coherent is off meanwhile (the auth and hook \
             caches ask the database, waiting claims and the outbox fall back on their polls)",
            listeners_listening.clone(),
        );
        let rings_in_flight = Gauge::default();
        registry.register(
            "switchboard_notify_hook_notifications_in_flight",
            "Notifications to hooks not yet ended: waiting for their hook lookup, queued at their \
             endpoint's supervisor, or being delivered",
            rings_in_flight.clone(),
        );
        let sink_sends = Family::<SinkLabels, Counter>::default();
        registry.register(
            "switchboard_sink_deliveries",
            "Outbox rows' attempts at notification sinks, by event type and outcome",
            sink_sends.clone(),
        );
        let outbox_depth = Gauge::default();
        registry.register(
            "switchboard_outbox_depth",
            "Outbox rows not yet ended (pending or held by a budget) and dead letters not yet written for every sink, read at each scrape",
            outbox_depth.clone(),
        );
        let outbox_oldest = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "switchboard_outbox_oldest_pending_seconds",
            "Age of the oldest pending outbox row or unsent dead letter (0 when none), read at each scrape",
            outbox_oldest.clone(),
        );
        let claims_deferred = Family::<DeferredLabels, Counter>::default();
        registry.register(
            "switchboard_claims_deferred",
            "Claims (and resumes of interrupted todos) an admission budget refused (the queue paused, its \
             in-flight cap reached, its hourly window spent), by reason",
            claims_deferred.clone(),
        );
        for &reason in Deferral::ALL {
            drop(claims_deferred.get_or_create(&DeferredLabels { reason }));
        }
        let digest_ticks = Counter::default();
        registry.register(
            "switchboard_digest_scheduler_ticks",
            "Digest scheduler ticks this instance finished, whatever they decided (a scheduler that stopped \
             ticking stops counting)",
            digest_ticks.clone(),
        );
        let batch_calls = Family::<BatchCallLabels, Counter>::default();
        registry.register(
            "switchboard_agent_batches",
            "Agent batch requests (claim-next with a limit above 1, batch complete, fail and create), by verb \
             and whether they were answered or refused as a whole",
            batch_calls.clone(),
        );
        let batch_items = Family::<BatchItemLabels, Counter>::default();
        registry.register(
            "switchboard_agent_batch_items",
            "Items of answered agent batches, by verb and outcome (ok, or the error code the single verb gives); \
             a batch claim counts each todo it claimed",
            batch_items.clone(),
        );
        for &verb in BatchVerb::ALL {
            for &outcome in BatchCallOutcome::ALL {
                drop(batch_calls.get_or_create(&BatchCallLabels { verb, outcome }));
            }
            for &outcome in BatchItemOutcome::ALL {
                drop(batch_items.get_or_create(&BatchItemLabels { verb, outcome }));
            }
        }
        let group_commit_runs = Family::<GroupCommitLabels, Counter>::default();
        registry.register(
            "switchboard_coalesced_runs",
            "Statements (claims) or transactions (completions) that answered single agent requests, by verb; a \
             run answers one request, or several that arrived while the verb's earlier runs were at the database",
            group_commit_runs.clone(),
        );
        let group_commit_requests = Family::<GroupCommitLabels, Counter>::default();
        registry.register(
            "switchboard_coalesced_requests",
            "Single agent requests answered by those runs, by verb (requests / runs is the mean batch)",
            group_commit_requests.clone(),
        );
        let group_commit_waiting = Family::<GroupCommitLabels, Gauge>::default();
        registry.register(
            "switchboard_coalesce_waiting",
            "Single agent requests waiting for their verb's earlier runs to leave the database, by verb (they go \
             in the next run)",
            group_commit_waiting.clone(),
        );
        let group_commit_alone = Family::<GroupCommitLabels, Counter>::default();
        registry.register(
            "switchboard_coalesced_alone",
            "Single agent requests a run gave back to run on their own, by verb: claims on a budgeted queue, \
             completions its statement did not complete (refusals, misses, attempts an earlier release opened), \
             and every request of a run that failed",
            group_commit_alone.clone(),
        );
        for &verb in GroupCommitVerb::ALL {
            let labels = GroupCommitLabels { verb };
            drop(group_commit_alone.get_or_create(&labels));
            drop(group_commit_runs.get_or_create(&labels));
            drop(group_commit_requests.get_or_create(&labels));
            drop(group_commit_waiting.get_or_create(&labels));
        }
        let long_poll_waiters = Gauge::default();
        registry.register(
            "switchboard_long_poll_waiters",
            "claim-next requests held waiting for work (wait_seconds) on this instance, past their first empty claim",
            long_poll_waiters.clone(),
        );
        let long_poll_wakeups = Counter::default();
        registry.register(
            "switchboard_long_poll_wakeups",
            "Times a waiting claim-next request was woken to claim again (work arrived on its queues, or the \
             claim listener reconnected)",
            long_poll_wakeups.clone(),
        );
        let long_poll_empty = Family::<EmptyWaitLabels, Counter>::default();
        registry.register(
            "switchboard_long_poll_empty",
            "Long-poll claim-next requests (wait_seconds above 0) answered without a claim, by why",
            long_poll_empty.clone(),
        );
        for &reason in EmptyWait::ALL {
            drop(long_poll_empty.get_or_create(&EmptyWaitLabels { reason }));
        }
        let places_refused = Family::<PlaceRefusedLabels, Counter>::default();
        registry.register(
            "switchboard_places_refused",
            "Requests refused a bounded place on this instance (an MCP session, a long-poll wait), by place \
             and why: their owner scope held its fair share, their endpoint its most sessions, or the \
             instance its most places",
            places_refused.clone(),
        );
        for &place in PlaceKind::ALL {
            for &reason in place.refusals() {
                drop(places_refused.get_or_create(&PlaceRefusedLabels { place, reason }));
            }
        }
        let outbound_refused = Family::<RefusedLabels, Counter>::default();
        registry.register(
            "switchboard_outbound_refused",
            "Outbound targets the SSRF guard refused, when saved or tested and at dial time, by cause (an \
             address class, own_address, unresolved, dns_timeout, or a rule of the URL's own text); callers are \
             told only forbidden_target for every cause that depends on where a name points",
            outbound_refused.clone(),
        );
        for &reason in crate::outbound::refusal::REFUSAL_REASONS {
            drop(outbound_refused.get_or_create(&RefusedLabels { reason }));
        }
        for &event in SinkEvent::ALL {
            for &outcome in SinkOutcome::ALL {
                drop(sink_sends.get_or_create(&SinkLabels { event, outcome }));
            }
        }
        registry.register_collector(Box::new(SignalsDropped(signals.clone())));
        for &event in HookEvent::ALL {
            for &outcome in RingOutcome::ALL {
                drop(rings.get_or_create(&RingLabels { r#type: event, outcome }));
            }
        }
        for &result in AttemptResult::ALL {
            drop(attempts.get_or_create(&AttemptLabels { result }));
        }
        for &reason in HookDisabledReason::ALL {
            drop(hooks_disabled.get_or_create(&DisabledLabels { reason }));
        }
        Metrics {
            inner: Arc::new(Inner {
                registry,
                rings,
                attempts,
                hooks_disabled,
                webhook_deliveries,
                webhook_verify_failures,
                requests_abandoned,
                hook_change_notices,
                listeners_listening,
                rings_in_flight,
                sink_sends,
                outbox_depth,
                outbox_oldest,
                claims_deferred,
                digest_ticks,
                batch_calls,
                batch_items,
                group_commit_runs,
                group_commit_requests,
                group_commit_waiting,
                group_commit_alone,
                long_poll_waiters,
                long_poll_wakeups,
                long_poll_empty,
                places_refused,
                outbound_refused,
            }),
        }
    }

    /// Counts one ring's fate.
    pub fn ring(&self, event: HookEvent, outcome: RingOutcome) {
        self.inner.rings.get_or_create(&RingLabels { r#type: event, outcome }).inc();
    }

    /// Counts one delivery attempt.
    pub fn attempt(&self, result: AttemptResult) {
        self.inner.attempts.get_or_create(&AttemptLabels { result }).inc();
    }

    /// Counts a hook Switchboard switched off.
    pub fn hook_disabled(&self, reason: HookDisabledReason) {
        self.inner.hooks_disabled.get_or_create(&DisabledLabels { reason }).inc();
    }

    /// Counts an accepted webhook delivery.
    pub fn webhook_delivery(&self) {
        self.inner.webhook_deliveries.inc();
    }

    /// Counts a webhook delivery refused for its signature.
    pub fn webhook_verify_failure(&self) {
        self.inner.webhook_verify_failures.inc();
    }

    /// Counts a request whose client hung up before its answer was ready.
    pub fn request_abandoned(&self) {
        self.inner.requests_abandoned.inc();
    }

    /// Counts a hook change notice the listener applied to the cache.
    pub fn hook_change_notice(&self) {
        self.inner.hook_change_notices.inc();
    }

    /// Records whether the change listener named `listener` is listening.
    pub fn listener_listening(&self, listener: &'static str, listening: bool) {
        self.inner.listeners_listening.get_or_create(&ListenerLabels { listener }).set(i64::from(listening));
    }

    /// Counts one announcement as under way for as long as the returned token, or a
    /// clone of it, exists.
    pub fn ring_in_flight(&self) -> InFlight {
        self.inner.rings_in_flight.inc();
        InFlight(self.inner.rings_in_flight.clone())
    }

    /// Counts an outbox row's send to a sink.
    pub fn sink_send(&self, event: SinkEvent, outcome: SinkOutcome) {
        self.inner.sink_sends.get_or_create(&SinkLabels { event, outcome }).inc();
    }

    /// Counts a claim (or a resume) an admission budget refused.
    pub fn claim_deferred(&self, reason: Deferral) {
        self.inner.claims_deferred.get_or_create(&DeferredLabels { reason }).inc();
    }

    /// Counts one agent batch request, answered or refused as a whole.
    pub fn batch_call(&self, verb: BatchVerb, outcome: BatchCallOutcome) {
        self.inner.batch_calls.get_or_create(&BatchCallLabels { verb, outcome }).inc();
    }

    /// Counts `n` items of an answered batch that came to `outcome`.
    pub fn batch_items(&self, verb: BatchVerb, outcome: BatchItemOutcome, n: u64) {
        if n > 0 {
            self.inner.batch_items.get_or_create(&BatchItemLabels { verb, outcome }).inc_by(n);
        }
    }

    /// Counts one run of a group commit of single requests that answered `n` of them.
    pub fn group_commit_run(&self, verb: GroupCommitVerb, n: usize) {
        let labels = GroupCommitLabels { verb };
        self.inner.group_commit_runs.get_or_create(&labels).inc();
        self.inner.group_commit_requests.get_or_create(&labels).inc_by(n as u64);
    }

    /// Counts `n` requests of `verb` a run gave back to run on their own.
    pub fn group_commit_alone(&self, verb: GroupCommitVerb, n: usize) {
        if n > 0 {
            self.inner.group_commit_alone.get_or_create(&GroupCommitLabels { verb }).inc_by(n as u64);
        }
    }

    /// How many single requests of `verb` wait for a run now.
    pub fn group_commit_waiting(&self, verb: GroupCommitVerb, n: usize) {
        self.inner.group_commit_waiting.get_or_create(&GroupCommitLabels { verb }).set(n as i64);
    }

    /// Counts one finished digest scheduler tick.
    pub fn digest_tick(&self) {
        self.inner.digest_ticks.inc();
    }

    /// Sets how many claim-next requests are held waiting.
    pub fn set_long_poll_waiters(&self, held: usize) {
        self.inner.long_poll_waiters.set(i64::try_from(held).unwrap_or(i64::MAX));
    }

    /// Counts a waiting claim-next request woken to claim again.
    pub fn long_poll_wakeup(&self) {
        self.inner.long_poll_wakeups.inc();
    }

    /// Counts a long-poll claim-next answered without a claim.
    pub fn long_poll_empty(&self, reason: EmptyWait) {
        self.inner.long_poll_empty.get_or_create(&EmptyWaitLabels { reason }).inc();
    }

    /// Counts a request refused a bounded place.
    pub fn place_refused(&self, place: PlaceKind, reason: PlaceRefusal) {
        self.inner.places_refused.get_or_create(&PlaceRefusedLabels { place, reason }).inc();
    }

    /// Counts an outbound target the guard refused, by its cause: a
    /// [`crate::outbound::refusal::REFUSAL_REASONS`] entry (the family's series stay
    /// that fixed set; the guard gives no other reason, which its tests pin).
    pub fn outbound_refused(&self, reason: &'static str) {
        if crate::outbound::refusal::REFUSAL_REASONS.contains(&reason) {
            self.inner.outbound_refused.get_or_create(&RefusedLabels { reason }).inc();
        }
    }

    /// Sets the outbox gauges (rows not yet ended; the oldest pending row's age).
    pub fn set_outbox(&self, depth: i64, oldest_pending_seconds: f64) {
        self.inner.outbox_depth.set(depth);
        self.inner.outbox_oldest.set(oldest_pending_seconds);
    }

    /// The exposition text.
    pub fn render(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.inner.registry)?;
        Ok(out)
    }
}

/// One announcement to hooks under way (see [`Metrics::ring_in_flight`]): each clone
/// counts once more, and each drop once less, however the ring ends (delivered,
/// dropped, refused by a full mailbox, or lost with a panicking actor).
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Clone for InFlight {
    fn clone(&self) -> Self {
        self.0.inc();
        InFlight(self.0.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::rules::retry::AttemptClass;
    use crate::outbound::TransportFailure;

    fn line<'a>(text: &'a str, series: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
    }

    #[test]
    fn every_series_is_shown_at_zero_before_anything_happens() {
        let text = Metrics::new(&Emitter::none()).render().unwrap();
        for series in [
            r#"switchboard_notify_hook_notifications_total{type="todo.ready",outcome="delivered"}"#,
            r#"switchboard_notify_hook_notifications_total{type="todo.dead_lettered",outcome="dropped"}"#,
            r#"switchboard_notify_hook_attempts_total{result="2xx"}"#,
            r#"switchboard_notify_hook_attempts_total{result="rejected_ssrf"}"#,
            r#"switchboard_notify_hooks_disabled_total{reason="consecutive_failures"}"#,
            "switchboard_webhook_deliveries_total",
            "switchboard_webhook_verify_failures_total",
            "switchboard_signals_dropped_total",
            r#"switchboard_claims_deferred_total{reason="paused"}"#,
            r#"switchboard_claims_deferred_total{reason="window_exhausted"}"#,
            r#"switchboard_agent_batches_total{verb="fail",outcome="refused"}"#,
            r#"switchboard_agent_batch_items_total{verb="create_todo",outcome="conflict"}"#,
            "switchboard_long_poll_waiters",
            "switchboard_long_poll_wakeups_total",
            r#"switchboard_long_poll_empty_total{reason="timed_out"}"#,
            r#"switchboard_long_poll_empty_total{reason="full"}"#,
            r#"switchboard_long_poll_empty_total{reason="shutdown"}"#,
            r#"switchboard_long_poll_empty_total{reason="scope_share"}"#,
            r#"switchboard_outbound_refused_total{reason="loopback"}"#,
            r#"switchboard_outbound_refused_total{reason="unresolved"}"#,
            r#"switchboard_outbound_refused_total{reason="dns_timeout"}"#,
            r#"switchboard_places_refused_total{place="mcp_session",reason="scope_share"}"#,
            r#"switchboard_places_refused_total{place="mcp_session",reason="endpoint_share"}"#,
            r#"switchboard_places_refused_total{place="mcp_session",reason="instance_full"}"#,
            r#"switchboard_places_refused_total{place="long_poll",reason="scope_share"}"#,
            r#"switchboard_places_refused_total{place="long_poll",reason="instance_full"}"#,
        ] {
            assert_eq!(line(&text, series), Some(format!("{series} 0").as_str()), "{series} in\n{text}");
        }
    }

    #[test]
    fn counts_land_on_their_own_label_set_and_clones_share_them() {
        let m = Metrics::new(&Emitter::none());
        let clone = m.clone();
        m.ring(HookEvent::DeadLettered, RingOutcome::Failed);
        clone.ring(HookEvent::DeadLettered, RingOutcome::Failed);
        m.attempt(AttemptClass::from_status(503).metric_result());
        m.attempt(AttemptClass::from(TransportFailure::RejectedSsrf).metric_result());
        m.hook_disabled(HookDisabledReason::ConsecutiveFailures);
        m.webhook_delivery();
        m.webhook_verify_failure();
        let text = m.render().unwrap();
        for (series, value) in [
            (r#"switchboard_notify_hook_notifications_total{type="todo.dead_lettered",outcome="failed"}"#, 2),
            (r#"switchboard_notify_hook_notifications_total{type="todo.ready",outcome="failed"}"#, 0),
            (r#"switchboard_notify_hook_attempts_total{result="5xx"}"#, 1),
            (r#"switchboard_notify_hook_attempts_total{result="rejected_ssrf"}"#, 1),
            (r#"switchboard_notify_hook_attempts_total{result="network"}"#, 0),
            (r#"switchboard_notify_hooks_disabled_total{reason="consecutive_failures"}"#, 1),
            ("switchboard_webhook_deliveries_total", 1),
            ("switchboard_webhook_verify_failures_total", 1),
        ] {
            assert_eq!(line(&text, series), Some(format!("{series} {value}").as_str()), "{series}");
        }
    }
}
