//! Limits and clean-up for text that agents and senders write: summaries, artifacts,
//! claimant labels, queue names and slugs.

/// Longest attempt summary kept, in bytes; longer summaries are truncated.
pub const SUMMARY_MAX_BYTES: usize = 2_048;
/// Longest artifact reference, in bytes.
pub const ARTIFACT_MAX_BYTES: usize = 512;
/// Longest claimant label, in bytes.
pub const CLAIMANT_MAX_BYTES: usize = 128;
/// Longest title of a todo, in bytes.
pub const TITLE_MAX_BYTES: usize = 1_024;
/// Longest `kind` or `source`, in bytes.
pub const LABEL_MAX_BYTES: usize = 128;
/// Longest idempotency key, in bytes.
pub const IDEMPOTENCY_KEY_MAX_BYTES: usize = 256;
/// Longest interrupt reason, in bytes.
pub const INTERRUPT_REASON_MAX_BYTES: usize = 1_024;
/// The reserved queue that holds quarantined deliveries; never drainable by agents.
pub const QUARANTINE_QUEUE: &str = "quarantine";

/// Cuts `text` to at most `max` bytes on a character boundary; says whether it cut.
pub fn truncate_bytes(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// Whether a JSON value holds U+0000 in any string or key. PostgreSQL's `text` and
/// `jsonb` cannot store it, so it is refused before it reaches a statement.
pub fn json_has_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(a) => a.iter().any(json_has_nul),
        serde_json::Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || json_has_nul(v)),
        _ => false,
    }
}

/// Replaces U+0000 with U+FFFD in every string and key of a JSON value: a sender's
/// payload is kept (PostgreSQL cannot store NUL) rather than refused after it verified.
pub fn scrub_nul_json(value: serde_json::Value) -> serde_json::Value {
    // Rebuilding every object is most of a delivery's JSON work; almost no body needs it.
    if json_has_nul(&value) { rebuild_without_nul(value) } else { value }
}

fn rebuild_without_nul(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) if s.contains('\0') => Value::String(s.replace('\0', "\u{fffd}")),
        Value::Array(a) => Value::Array(a.into_iter().map(rebuild_without_nul).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k.replace('\0', "\u{fffd}"), rebuild_without_nul(v))).collect())
        }
        other => other,
    }
}

/// Removes control characters (a label is one line of plain text).
pub fn strip_controls(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// A claimant label: control characters removed, at most 128 bytes; empty means none.
pub fn claimant_label(raw: &str) -> Option<String> {
    let (cut, _) = truncate_bytes(&strip_controls(raw), CLAIMANT_MAX_BYTES);
    let trimmed = cut.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Whether a claimant label is the Harness daemon's relay form
/// `harness/<host>/<harness>/run-<n>`.
pub fn is_relay_claimant(label: &str) -> bool {
    let parts: Vec<&str> = label.split('/').collect();
    matches!(parts.as_slice(), ["harness", host, harness, run]
        if !host.is_empty() && !harness.is_empty()
            && run.strip_prefix("run-").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
}

/// Why an artifact reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    /// Longer than 512 bytes.
    #[error("artifact is longer than 512 bytes")]
    TooLong,
    /// Neither an https URL nor `mcp://cairn/<id>`.
    #[error("artifact must be an https URL or mcp://cairn/<id>")]
    BadForm,
}

/// Accepts an https URL (with a host, no spaces or control characters) or
/// `mcp://cairn/<1–64 of [A-Za-z0-9_-]>`.
pub fn validate_artifact(artifact: &str) -> Result<(), ArtifactError> {
    if artifact.len() > ARTIFACT_MAX_BYTES {
        return Err(ArtifactError::TooLong);
    }
    if let Some(id) = artifact.strip_prefix("mcp://cairn/") {
        let ok =
            (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        return if ok { Ok(()) } else { Err(ArtifactError::BadForm) };
    }
    let Some(rest) = artifact.strip_prefix("https://") else {
        return Err(ArtifactError::BadForm);
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let clean = artifact.chars().all(|c| !c.is_control() && !c.is_whitespace());
    if host.is_empty() || host.contains('@') || !clean {
        return Err(ArtifactError::BadForm);
    }
    Ok(())
}

/// Whether `name` is a valid queue name: 1–64 of `[a-z0-9._-]`, starting alphanumeric.
pub fn valid_queue_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether `slug` is a valid endpoint slug: 1–63 of `[a-z0-9_-]`, starting alphanumeric.
pub fn valid_slug(slug: &str) -> bool {
    let bytes = slug.as_bytes();
    (1..=63).contains(&bytes.len())
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_character_boundaries() {
        let s = "é".repeat(10); // 20 bytes
        let (cut, did) = truncate_bytes(&s, 5);
        assert_eq!(cut, "éé");
        assert!(did);
        assert_eq!(truncate_bytes("abc", 5), ("abc".into(), false));
    }

    #[test]
    fn claimant_labels_lose_control_characters_and_stop_at_128_bytes() {
        assert_eq!(claimant_label("a\nb\u{7}c").as_deref(), Some("abc"));
        assert_eq!(claimant_label(&"x".repeat(300)).unwrap().len(), 128);
        assert_eq!(claimant_label(" \n "), None);
    }

    #[test]
    fn the_harness_relay_label_is_recognised() {
        assert!(is_relay_claimant("harness/box-1/claude/run-12"));
        assert!(!is_relay_claimant("harness/box-1/claude/run-"));
        assert!(!is_relay_claimant("harness/box-1/run-3"));
        assert!(!is_relay_claimant("worker-7"));
    }

    #[test]
    fn artifacts_are_https_urls_or_cairn_handles() {
        assert!(validate_artifact("https://ci.example.com/run/1").is_ok());
        assert!(validate_artifact("mcp://cairn/abc_DEF-123").is_ok());
        assert_eq!(validate_artifact("http://ci.example.com"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact("javascript:alert(1)"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact("mcp://cairn/"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact("mcp://cairn/a b"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact("https://user@host/x"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact("https:///nohost"), Err(ArtifactError::BadForm));
        assert_eq!(validate_artifact(&format!("https://h/{}", "a".repeat(600))), Err(ArtifactError::TooLong));
    }

    #[test]
    fn nul_is_found_anywhere_in_json() {
        assert!(json_has_nul(&serde_json::json!({"a": ["x", "y\u{0}"]})));
        assert!(json_has_nul(&serde_json::json!({"k\u{0}": 1})));
        assert!(!json_has_nul(&serde_json::json!({"a": ["\\u0000"]})));
    }

    #[test]
    fn queue_names_and_slugs_are_plain_lowercase() {
        assert!(valid_queue_name("builds"));
        assert!(valid_queue_name("ci.v2_x-1"));
        assert!(!valid_queue_name("Builds"));
        assert!(!valid_queue_name(""));
        assert!(!valid_queue_name(".x"));
        assert!(!valid_queue_name(&"a".repeat(65)));
        assert!(valid_slug("agent-1"));
        assert!(!valid_slug("Agent"));
        assert!(!valid_slug("a.b"));
    }
}
