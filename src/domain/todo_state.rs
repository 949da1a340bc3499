//! The vocabulary of a todo's life: its states, why it died, how an attempt ended.

use super::text_enum::text_enum;

text_enum!(
    /// Where a todo is in its life. A dead letter is not a state: it is `failed` with
    /// no retry scheduled (see [`crate::domain::transitions`]).
    TodoState {
        /// Waiting to be claimed.
        Pending => "pending",
        /// Held by an agent under a lease.
        Claimed => "claimed",
        /// Interrupted: waiting on a human's input.
        InputRequired => "input_required",
        /// Interrupted: waiting on an authorisation.
        AuthRequired => "auth_required",
        /// Completed.
        Done => "done",
        /// Failed; either a retry is scheduled or it is a dead letter.
        Failed => "failed",
        /// Canceled.
        Canceled => "canceled",
    }
);

impl TodoState {
    /// The two states in which an agent waits on the outside world.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TodoState::InputRequired | TodoState::AuthRequired)
    }
}

text_enum!(
    /// Why a todo stopped being retried.
    DeadReason {
        /// Failed at its attempt cap (agent or operator fail).
        AttemptsExhausted => "attempts_exhausted",
        /// Its lease lapsed on the last allowed attempt.
        LeaseExpired => "lease_expired",
        /// Its interrupt lease lapsed on the last allowed attempt.
        InterruptExpired => "interrupt_expired",
        /// Its endpoint was revoked or expired while it was live.
        EndpointRevoked => "endpoint_revoked",
    }
);

text_enum!(
    /// How an attempt ended.
    AttemptOutcome {
        /// The agent completed the todo.
        Completed => "completed",
        /// The agent (or an operator) failed the todo.
        Failed => "failed",
        /// The agent handed the todo back.
        Released => "released",
        /// The lease lapsed and the lease reaper closed the attempt.
        LeaseExpired => "lease_expired",
        /// Closed by a sweep for another reason.
        Reaped => "reaped",
        /// The interrupt lease lapsed and the interrupt reaper closed the attempt.
        InterruptExpired => "interrupt_expired",
        /// The todo was canceled.
        Canceled => "canceled",
        /// The endpoint was revoked.
        Revoked => "revoked",
    }
);

text_enum!(
    /// What happened to the todo when an attempt ended.
    AttemptDisposition {
        /// The todo is done.
        Done => "done",
        /// A retry is scheduled.
        RetryScheduled => "retry_scheduled",
        /// The todo went back to pending.
        Requeued => "requeued",
        /// The todo became a dead letter.
        DeadLettered => "dead_lettered",
        /// The todo was canceled.
        Canceled => "canceled",
    }
);

text_enum!(
    /// Why a todo became ready to claim (the `reason` of `todo.ready`).
    ReadyReason {
        /// It was just created.
        Created => "created",
        /// It went back to pending (lapsed lease, due retry, release, lapsed interrupt).
        Requeued => "requeued",
    }
);

text_enum!(
    /// How much an inbound delivery's sender is trusted.
    TrustMode {
        /// Verified by the source's signature scheme.
        Signed => "signed",
        /// The unguessable ingest URL is the only credential (generic webhooks).
        Token => "token",
        /// A signed source type configured `unverified`: routed, never announced.
        Open => "open",
        /// Written by an operator.
        Operator => "operator",
    }
);

text_enum!(
    /// What intake did with a delivery.
    Disposition {
        /// Routed to one or more queues.
        Routed => "routed",
        /// Dropped by a rule.
        Dropped => "dropped",
        /// Put in quarantine.
        Quarantined => "quarantined",
        /// A rule faulted (the delivery is quarantined).
        Faulted => "faulted",
    }
);

text_enum!(
    /// Why intake held a delivery in quarantine.
    QuarantineReason {
        /// The sender is not among the webhook's trusted actors.
        UntrustedActor => "untrusted_actor",
        /// A routing rule faulted.
        RuleFault => "rule_fault",
        /// A routing rule chose quarantine.
        RuleAction => "rule_action",
    }
);

text_enum!(
    /// Which interrupt state an agent asks for.
    InterruptState {
        /// Waiting on a human's input.
        InputRequired => "input_required",
        /// Waiting on an authorisation.
        AuthRequired => "auth_required",
    }
);

impl From<InterruptState> for TodoState {
    fn from(s: InterruptState) -> Self {
        match s {
            InterruptState::InputRequired => TodoState::InputRequired,
            InterruptState::AuthRequired => TodoState::AuthRequired,
        }
    }
}

text_enum!(
    /// A team member's role: members use team resources, admins configure them.
    TeamRole {
        /// Configures the team's resources.
        Admin => "admin",
        /// Uses the team's resources.
        Member => "member",
    }
);

text_enum!(
    /// Whether an endpoint may still act.
    EndpointState {
        /// Active.
        Active => "active",
        /// Revoked (or expired): its token no longer authenticates.
        Revoked => "revoked",
    }
);

text_enum!(
    /// An agent's declared presence.
    Presence {
        /// Clocked in.
        In => "in",
        /// Clocked out.
        Out => "out",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_stored_text() {
        for s in TodoState::ALL {
            assert_eq!(s.as_str().parse::<TodoState>().unwrap(), *s);
        }
        assert!("dead".parse::<TodoState>().is_err());
    }

    #[test]
    fn wire_form_is_snake_case() {
        assert_eq!(serde_json::to_string(&TodoState::InputRequired).unwrap(), "\"input_required\"");
        assert_eq!(serde_json::to_string(&DeadReason::LeaseExpired).unwrap(), "\"lease_expired\"");
    }
}
