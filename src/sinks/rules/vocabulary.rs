//! The vocabulary of notification sinks (SPEC section 10, ADR-0034): how loud a
//! notification is, what kind of sink and credential carries it, which event raised it,
//! and where its outbox row stands. Every enum is stored as text and spoken as the
//! snake_case (or dotted) string shown on the wire.

use std::cmp::Ordering;

use crate::domain::text_enum::text_enum;

text_enum!(
    /// How loud a notification is. Ordered: `low` < `normal` < `high`.
    Severity {
        /// Informational (a digest).
        Low => "low",
        /// The default for most events.
        Normal => "normal",
        /// Needs attention now (a dead letter).
        High => "high",
    }
);

impl Severity {
    /// The position in the order `low` (0) < `normal` (1) < `high` (2).
    pub fn rank(self) -> u8 {
        match self {
            Severity::Low => 0,
            Severity::Normal => 1,
            Severity::High => 2,
        }
    }

    /// Whether a notification of this severity passes a subscription's `min_severity`.
    pub fn meets(self, min: Severity) -> bool {
        self.rank() >= min.rank()
    }
}

impl PartialOrd for Severity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Severity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

text_enum!(
    /// What a sink sends through.
    SinkKind {
        /// A Gotify server: `POST {base}/message` with `X-Gotify-Key`.
        Gotify => "gotify",
        /// An Apprise API server: `POST {base}/notify/{key}` or `POST {base}/notify/`.
        Apprise => "apprise",
    }
);

impl SinkKind {
    /// The kind of vault connection a sink of this kind must reference.
    pub fn connection_kind(self) -> ConnectionKind {
        match self {
            SinkKind::Gotify => ConnectionKind::Gotify,
            SinkKind::Apprise => ConnectionKind::Apprise,
        }
    }
}

text_enum!(
    /// What a vault connection's secret is for.
    ConnectionKind {
        /// A Gotify application token.
        Gotify => "gotify",
        /// An Apprise configuration key or stateless Apprise URLs.
        Apprise => "apprise",
        /// A `cairn_pat_…` token for publishing digests.
        Cairn => "cairn",
    }
);

text_enum!(
    /// How an Apprise sink names its targets.
    AppriseMode {
        /// A configuration key on the Apprise server (preferred: the service URLs never
        /// reach Switchboard).
        Key => "key",
        /// Stateless: the Apprise URLs are the connection's secret.
        Urls => "urls",
    }
);

text_enum!(
    /// The event a notification is about.
    SinkEvent {
        /// A todo became a dead letter (or an endpoint cascade dead-lettered many).
        DeadLettered => "todo.dead_lettered",
        /// A todo whose history has relay attempts became a dead letter.
        RelayExhausted => "relay.exhausted",
        /// A delivery was quarantined.
        Quarantined => "delivery.quarantined",
        /// A routing rule with a `notify` action matched.
        RuleMatched => "rule.notify",
        /// A scheduled queue digest is due.
        Digest => "digest",
        /// An agent paged its owner.
        AgentPage => "agent.notify",
    }
);

impl SinkEvent {
    /// The severity of the event when nothing else sets one (a rule's
    /// `notify_severity` or an agent's `severity` may).
    pub fn default_severity(self) -> Severity {
        match self {
            SinkEvent::DeadLettered | SinkEvent::RelayExhausted => Severity::High,
            SinkEvent::Quarantined | SinkEvent::RuleMatched | SinkEvent::AgentPage => Severity::Normal,
            SinkEvent::Digest => Severity::Low,
        }
    }
}

text_enum!(
    /// Where one outbox row (one notification to one sink) stands.
    OutboxStatus {
        /// Waiting for its first or next attempt.
        Pending => "pending",
        /// The sink took it.
        Sent => "sent",
        /// The sink's budget was spent; it goes out coalesced when a token returns.
        Held => "held",
        /// It went out inside one coalesced message with other held rows.
        Coalesced => "coalesced",
        /// Apprise reached some of its services but not all (424, after one retry).
        Partial => "partial",
        /// Every attempt failed, or the sink refused it for good.
        Undeliverable => "undeliverable",
    }
);

impl OutboxStatus {
    /// Whether the row is finished: nothing will send it again.
    pub fn is_final(self) -> bool {
        !matches!(self, OutboxStatus::Pending | OutboxStatus::Held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_order_low_normal_high_and_meet_any_lower_minimum() {
        assert!(Severity::Low < Severity::Normal && Severity::Normal < Severity::High);
        assert_eq!([Severity::High, Severity::Low, Severity::Normal].iter().max(), Some(&Severity::High));
        for s in Severity::ALL {
            for min in Severity::ALL {
                assert_eq!(s.meets(*min), s.rank() >= min.rank(), "{s} vs {min}");
            }
        }
        assert!(Severity::Normal.meets(Severity::Low));
        assert!(!Severity::Normal.meets(Severity::High));
    }

    #[test]
    fn events_carry_the_specified_default_severities() {
        let got: Vec<_> = SinkEvent::ALL.iter().map(|e| (e.as_str(), e.default_severity())).collect();
        assert_eq!(
            got,
            [
                ("todo.dead_lettered", Severity::High),
                ("relay.exhausted", Severity::High),
                ("delivery.quarantined", Severity::Normal),
                ("rule.notify", Severity::Normal),
                ("digest", Severity::Low),
                ("agent.notify", Severity::Normal),
            ]
        );
    }

    #[test]
    fn wire_forms_round_trip_through_serde_and_from_str() {
        fn check<T>(all: &[T])
        where
            T: Copy + std::fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned,
            T: std::str::FromStr + std::fmt::Display,
        {
            for v in all {
                let json = serde_json::to_string(v).unwrap();
                assert_eq!(json, format!("\"{v}\""));
                assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *v);
                assert_eq!(v.to_string().parse::<T>().ok(), Some(*v));
            }
        }
        check(Severity::ALL);
        check(SinkKind::ALL);
        check(ConnectionKind::ALL);
        check(AppriseMode::ALL);
        check(SinkEvent::ALL);
        check(OutboxStatus::ALL);
        assert!("Dead_Lettered".parse::<SinkEvent>().is_err());
        assert!("urgent".parse::<Severity>().is_err());
    }

    #[test]
    fn a_sink_kind_names_the_connection_kind_it_needs() {
        assert_eq!(SinkKind::Gotify.connection_kind(), ConnectionKind::Gotify);
        assert_eq!(SinkKind::Apprise.connection_kind(), ConnectionKind::Apprise);
    }

    #[test]
    fn only_pending_and_held_rows_are_unfinished() {
        let open: Vec<_> = OutboxStatus::ALL.iter().filter(|s| !s.is_final()).collect();
        assert_eq!(open, [&OutboxStatus::Pending, &OutboxStatus::Held]);
    }
}
