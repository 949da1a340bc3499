//! Prometheus metrics (SPEC 12): one registry per process, served at `/metrics`.
//! Labels are closed enums, never ids, so a family's size is fixed; every label set is
//! created at zero up front, so a scrape shows each series before its first event.
//!
//! Each file of this module registers one group of families and counts into them:
//! `hooks` (notify hooks), `http` (webhook intake, abandoned requests, bounded places),
//! `answers` (HTTP answers by surface and status class), `listeners` (change listeners),
//! `sinks` (sinks, the outbox, digest ticks), `digests` (digest runs), `dead_letters`
//! (dead letters by reason, and those that reached no one), `claims` (admission, long
//! polls), `batches` and `group_commit` (agent verbs), `outbound` (the SSRF guard). This
//! one holds the registry and reads the signals the store dropped.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::registry::Registry;

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

        label_values_of!($name);
    };
}

/// Label values a type already spells (`as_str`): the notify channel's, the domain's,
/// and those [`label_values!`] declares.
macro_rules! label_values_of {
    ($($name:ty),+) => {$(
        impl prometheus_client::encoding::EncodeLabelValue for $name {
            fn encode(
                &self,
                encoder: &mut prometheus_client::encoding::LabelValueEncoder,
            ) -> Result<(), std::fmt::Error> {
                std::fmt::Write::write_str(encoder, self.as_str())
            }
        }
    )+};
}

mod answers;
mod batches;
mod claims;
mod dead_letters;
mod digests;
mod group_commit;
mod hooks;
mod http;
mod listeners;
mod outbound;
mod sinks;

pub use answers::{StatusClass, Surface};
pub use batches::{BatchCallOutcome, BatchItemOutcome, BatchVerb};
pub use claims::EmptyWait;
pub use dead_letters::Unreached;
pub use digests::DigestRun;
pub use group_commit::GroupCommitVerb;
pub use hooks::{InFlight, RingOutcome};
pub use http::{PlaceKind, PlaceRefusal};
pub use sinks::SinkOutcome;

/// The content type of what [`Metrics::render`] produces (Prometheus text 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Whatever counts the signals it could not hand on (the store's emitter, which
/// implements this): read at each scrape as `switchboard_signals_dropped_total`, so
/// there is no second counter to drift from it.
pub trait DroppedSignals: Clone + Send + Sync + 'static {
    /// How many signals were dropped so far.
    fn signals_dropped(&self) -> u64;
}

/// Reads the drop count at scrape time.
struct SignalsDropped<S>(S);

impl<S> std::fmt::Debug for SignalsDropped<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignalsDropped")
    }
}

impl<S: DroppedSignals> Collector for SignalsDropped<S> {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counter = ConstCounter::new(self.0.signals_dropped());
        let metric = encoder.encode_descriptor(
            "switchboard_signals_dropped",
            "Signals (todo ready, dead lettered) dropped because a recipient's mailbox was full or gone",
            None,
            counter.metric_type(),
        )?;
        counter.encode(metric)
    }
}

struct Inner {
    registry: Registry,
    hooks: hooks::HookFamilies,
    http: http::HttpFamilies,
    listeners: listeners::ListenerFamilies,
    sinks: sinks::SinkFamilies,
    claims: claims::ClaimFamilies,
    batches: batches::BatchFamilies,
    group_commit: group_commit::GroupCommitFamilies,
    outbound: outbound::OutboundFamilies,
    answers: answers::AnswerFamilies,
    dead_letters: dead_letters::DeadLetterFamilies,
    digests: digests::DigestFamilies,
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
    pub fn new(signals: &impl DroppedSignals) -> Self {
        let mut registry = Registry::default();
        let hooks = hooks::HookFamilies::register(&mut registry);
        let http = http::HttpFamilies::register(&mut registry);
        let listeners = listeners::ListenerFamilies::register(&mut registry);
        let sinks = sinks::SinkFamilies::register(&mut registry);
        let claims = claims::ClaimFamilies::register(&mut registry);
        let batches = batches::BatchFamilies::register(&mut registry);
        let group_commit = group_commit::GroupCommitFamilies::register(&mut registry);
        let outbound = outbound::OutboundFamilies::register(&mut registry);
        let answers = answers::AnswerFamilies::register(&mut registry);
        let dead_letters = dead_letters::DeadLetterFamilies::register(&mut registry);
        let digests = digests::DigestFamilies::register(&mut registry);
        registry.register_collector(Box::new(SignalsDropped(signals.clone())));
        let inner = Inner {
            registry,
            hooks,
            http,
            listeners,
            sinks,
            claims,
            batches,
            group_commit,
            outbound,
            answers,
            dead_letters,
            digests,
        };
        Metrics { inner: Arc::new(inner) }
    }

    /// The exposition text.
    pub fn render(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.inner.registry)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
