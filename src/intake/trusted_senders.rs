//! Trusted actors: which senders of a signed source may put work on a queue. An
//! untrusted sender's delivery is not refused (it verified): it is held in quarantine.

use serde::{Deserialize, Serialize};

/// A webhook's trusted-actor policy, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum TrustedActors {
    /// Every sender is trusted.
    AllowAll {
        /// Must be true.
        allow_all: bool,
    },
    /// Only these sender logins (GitHub/Gitea); an empty list trusts no one.
    Logins {
        /// Sender logins, compared case-insensitively.
        logins: Vec<String>,
    },
}

impl TrustedActors {
    /// The stored JSON form.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Most logins a policy may list.
pub const MAX_LOGINS: usize = 256;

impl TrustedActors {
    /// Checks a policy before it is stored.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            TrustedActors::AllowAll { allow_all: false } => Err("allow_all must be true when given".into()),
            TrustedActors::Logins { logins } if logins.len() > MAX_LOGINS => {
                Err(format!("at most {MAX_LOGINS} logins"))
            }
            TrustedActors::Logins { logins }
                if logins.iter().any(|l| l.is_empty() || l.len() > 100 || l.chars().any(char::is_control)) =>
            {
                Err("logins must be 1–100 printable characters".into())
            }
            _ => Ok(()),
        }
    }
}

/// Whether a source type carries a sender (actor) that the policy judges.
pub fn source_has_actors(source_type: &str) -> bool {
    matches!(source_type, "github" | "gitea")
}

/// The sender login of a GitHub or Gitea delivery (`sender.login`).
pub fn sender_login(body: Option<&serde_json::Value>) -> Option<&str> {
    body?.pointer("/sender/login")?.as_str()
}

/// Whether the delivery's sender is trusted. Sources without actors are always trusted;
/// for sources with actors, no policy (or an empty list) trusts no one.
pub fn is_trusted(source_type: &str, policy: Option<&TrustedActors>, body: Option<&serde_json::Value>) -> bool {
    if !source_has_actors(source_type) {
        return true;
    }
    match policy {
        Some(TrustedActors::AllowAll { allow_all }) => *allow_all,
        Some(TrustedActors::Logins { logins }) => {
            sender_login(body).is_some_and(|who| logins.iter().any(|l| l.eq_ignore_ascii_case(who)))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(v: serde_json::Value) -> TrustedActors {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_listed_login_is_trusted_case_insensitively_and_others_are_not() {
        let p = policy(json!({"logins": ["Octo"]}));
        assert!(is_trusted("github", Some(&p), Some(&json!({"sender": {"login": "octo"}}))));
        assert!(!is_trusted("github", Some(&p), Some(&json!({"sender": {"login": "mallory"}}))));
        assert!(!is_trusted("github", Some(&p), Some(&json!({"no": "sender"}))));
        assert!(!is_trusted("gitea", Some(&p), None));
    }

    #[test]
    fn an_empty_list_or_no_policy_trusts_no_one() {
        let body = json!({"sender": {"login": "octo"}});
        assert!(!is_trusted("github", Some(&policy(json!({"logins": []}))), Some(&body)));
        assert!(!is_trusted("github", None, Some(&body)));
    }

    #[test]
    fn allow_all_trusts_everyone_and_sources_without_actors_are_always_trusted() {
        assert!(is_trusted("gitea", Some(&policy(json!({"allow_all": true}))), None));
        assert!(is_trusted("stripe", None, None));
        assert!(is_trusted("generic", Some(&policy(json!({"logins": []}))), None));
    }

    #[test]
    fn policies_are_checked_before_they_are_stored() {
        assert!(policy(json!({"allow_all": false})).validate().is_err());
        assert!(policy(json!({"logins": [""]})).validate().is_err());
        assert!(serde_json::from_value::<TrustedActors>(json!({"logins": ["a"], "extra": 1})).is_err());
        assert!(policy(json!({"logins": ["octo"]})).validate().is_ok());
    }
}
