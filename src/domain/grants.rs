//! Verbs an endpoint may be granted. Every agent route names the verb it needs.

use super::text_enum::text_enum;

text_enum!(
    /// One grantable verb.
    Verb {
        /// List this endpoint's drainable todos.
        ListTodos => "list_todos",
        /// Read one todo with its attempts.
        GetTodo => "get_todo",
        /// Claim a todo by id.
        Claim => "claim",
        /// Claim the oldest pending todo.
        ClaimNext => "claim_next",
        /// Extend a lease (or an interrupt lease).
        Heartbeat => "heartbeat",
        /// Complete a claimed todo.
        Complete => "complete",
        /// Fail a claimed todo.
        Fail => "fail",
        /// Hand a claimed todo back.
        Release => "release",
        /// Interrupt a claimed todo and resume it.
        Interrupt => "interrupt",
        /// Create todos on this endpoint's queues.
        CreateTodo => "create_todo",
        /// Manage this endpoint's hooks (off by default).
        ManageHooks => "notify_hooks",
        /// Manage the owner's notification sinks (off by default).
        Notifications => "notifications",
        /// Page the owner (off by default).
        PageOwner => "notify_owner",
    }
);

/// The drain family: what an endpoint gets when no grants are named.
pub const DRAIN_FAMILY: &[Verb] = &[
    Verb::ListTodos,
    Verb::GetTodo,
    Verb::Claim,
    Verb::ClaimNext,
    Verb::Heartbeat,
    Verb::Complete,
    Verb::Fail,
    Verb::Release,
];

/// Verbs that are never implied and must be named explicitly, because their holder can
/// reach people or redirect the owner's alerts.
pub const SENSITIVE: &[Verb] = &[Verb::ManageHooks, Verb::Notifications, Verb::PageOwner];

/// Why `verb` is sensitive, in words a grant screen shows beside it (none: it is not).
pub fn why_sensitive(verb: Verb) -> Option<&'static str> {
    match verb {
        Verb::ManageHooks => Some("its holder can send this endpoint's doorbells to any URL it chooses"),
        Verb::Notifications => Some("its holder can redirect or silence the owner's alerts"),
        Verb::PageOwner => Some("its holder can page a person (at most 5 times an hour)"),
        _ => None,
    }
}

/// Normalises a requested grant list: empty means the drain family; duplicates go.
pub fn normalise(requested: &[Verb]) -> Vec<Verb> {
    if requested.is_empty() {
        return DRAIN_FAMILY.to_vec();
    }
    let mut out: Vec<Verb> = Vec::with_capacity(requested.len());
    for v in requested {
        if !out.contains(v) {
            out.push(*v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_grants_named_means_the_drain_family() {
        assert_eq!(normalise(&[]), DRAIN_FAMILY.to_vec());
        assert!(!DRAIN_FAMILY.iter().any(|v| SENSITIVE.contains(v)));
    }

    #[test]
    fn every_sensitive_verb_and_only_those_says_why() {
        for v in Verb::ALL {
            assert_eq!(why_sensitive(*v).is_some(), SENSITIVE.contains(v), "{v}");
        }
    }

    #[test]
    fn named_grants_are_kept_once_each() {
        assert_eq!(normalise(&[Verb::Claim, Verb::Claim, Verb::Fail]), vec![Verb::Claim, Verb::Fail]);
    }
}
