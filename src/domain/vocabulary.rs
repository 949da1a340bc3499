//! One vocabulary for where a todo stands, as people read it: the Board's pills, the
//! `phase` field of the API's todo answers, the CLI and the docs all take their words
//! from [`Phase`]. The contract's own names stay as they are (`state: "failed"` with
//! `dead_letter: true`, `reason` in the dead-letter list): a phase is added beside them,
//! never instead of them.
//!
//! | API `state` (+ field)                     | `phase`   | Board pill | means                   |
//! |-------------------------------------------|-----------|------------|-------------------------|
//! | `pending`                                 | `pending` | Pending    | waiting to be claimed   |
//! | `claimed`                                 | `claimed` | Claimed    | held under a lease      |
//! | `done`                                    | `done`    | Done       | completed               |
//! | `failed`, `next_retry_at` set             | `failed`  | Failed     | a retry is scheduled    |
//! | `failed`, `dead_letter: true`             | `dead`    | Dead       | no retry left           |
//! | `input_required`, `auth_required`, `canceled` | null  | (All only) |                         |

use super::text_enum::text_enum;
use super::todo_state::TodoState;

text_enum!(
    /// Where a todo stands, in the words of the Todos view's pills (SPEC 9). `failed`
    /// and `dead` split the state `failed` by whether a retry is scheduled.
    Phase {
        /// Waiting to be claimed.
        Pending => "pending",
        /// Held by an agent under a lease.
        Claimed => "claimed",
        /// Completed.
        Done => "done",
        /// Failed, and a retry is scheduled.
        Failed => "failed",
        /// Failed with no retry left: a dead letter.
        Dead => "dead",
    }
);

impl Phase {
    /// The word the Board's pill and chips show.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Claimed => "Claimed",
            Phase::Done => "Done",
            Phase::Failed => "Failed",
            Phase::Dead => "Dead",
        }
    }

    /// What the word means, for a tooltip or the docs.
    pub fn meaning(self) -> &'static str {
        match self {
            Phase::Pending => "waiting to be claimed",
            Phase::Claimed => "held by an agent under a lease",
            Phase::Done => "completed",
            Phase::Failed => "a retry is scheduled",
            Phase::Dead => "no retry left (a dead letter)",
        }
    }

    /// The phase of a todo in `state`, `retry_scheduled` telling a failed todo that
    /// will run again from a dead letter; none for the states no pill but All holds
    /// (interrupted, canceled).
    pub fn of(state: TodoState, retry_scheduled: bool) -> Option<Phase> {
        match state {
            TodoState::Pending => Some(Phase::Pending),
            TodoState::Claimed => Some(Phase::Claimed),
            TodoState::Done => Some(Phase::Done),
            TodoState::Failed if retry_scheduled => Some(Phase::Failed),
            TodoState::Failed => Some(Phase::Dead),
            TodoState::InputRequired | TodoState::AuthRequired | TodoState::Canceled => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_todo_is_failed_while_a_retry_is_scheduled_and_dead_when_none_is() {
        assert_eq!(Phase::of(TodoState::Failed, true), Some(Phase::Failed));
        assert_eq!(Phase::of(TodoState::Failed, false), Some(Phase::Dead));
        assert_eq!(Phase::of(TodoState::Canceled, false), None);
        assert_eq!(Phase::Dead.as_str(), "dead");
        assert_eq!(Phase::Failed.label(), "Failed");
        assert_eq!(Phase::Failed.meaning(), "a retry is scheduled");
    }

    #[test]
    fn every_phase_is_named_by_its_wire_word_capitalised() {
        for p in Phase::ALL {
            let mut wire = p.as_str().chars();
            let first = wire.next().map(|c| c.to_ascii_uppercase()).into_iter().collect::<String>();
            assert_eq!(p.label(), format!("{first}{}", wire.as_str()));
        }
    }
}

text_enum!(
    /// Who wrote a piece of text Switchboard passes on (a todo's title, a summary):
    /// messages and digests label it so it never passes for Switchboard's own words.
    Writer {
        /// The sender of a webhook delivery (the title rules derived it from what
        /// arrived).
        Sender => "sender",
        /// An agent (it created the todo, or closed the attempt).
        Agent => "agent",
    }
);

impl Writer {
    /// The label beside the text: `sender-written` or `agent-written`.
    pub fn label(self) -> &'static str {
        match self {
            Writer::Sender => "sender-written",
            Writer::Agent => "agent-written",
        }
    }

    /// Who wrote the title of a todo: its delivery's sender when it came through a
    /// webhook (`from_delivery`), else the agent that created it.
    pub fn of_title(from_delivery: bool) -> Writer {
        if from_delivery { Writer::Sender } else { Writer::Agent }
    }
}

#[cfg(test)]
mod writer_tests {
    use super::*;

    #[test]
    fn a_title_from_a_delivery_is_sender_written_and_any_other_agent_written() {
        assert_eq!(Writer::of_title(true).label(), "sender-written");
        assert_eq!(Writer::of_title(false).label(), "agent-written");
    }
}
