//! Readiness and metrics: whether the database answers, and the Prometheus text for
//! the bearer of `SWITCHBOARD_METRICS_TOKEN` (without a configured token every scrape
//! is refused, so metrics are never public by accident).

use subtle::ConstantTimeEq;

use super::Services;
use crate::error::{Error, Result};

/// Whether the database answers.
pub async fn ready(s: &Services) -> Result<()> {
    s.store.ping().await
}

/// The metrics exposition, for a caller presenting exactly the configured token
/// (compared in constant time); anyone else: 401.
pub async fn metrics(s: &Services, presented: Option<&str>) -> Result<String> {
    if !authorized(s.metrics_token.as_deref(), presented) {
        return Err(Error::Unauthenticated);
    }
    // Read at each scrape: the outbox is shared by every instance. A database out of
    // reach must not take the scrape down with it: the families that tell of the outage
    // (503s answered, the listener down) are what the alerts read then.
    match s.store.outbox_depth().await {
        Ok((depth, oldest)) => s.metrics.set_outbox(depth, oldest),
        Err(e) => {
            tracing::warn!(error = %e, "metrics: the outbox's depth could not be read");
            s.metrics.outbox_unread();
        }
    }
    s.metrics.render().map_err(|e| Error::internal_from("metrics encoding", e))
}

/// Whether `presented` is exactly the configured token.
fn authorized(expected: Option<&str>, presented: Option<&str>) -> bool {
    let Some(expected) = expected else { return false };
    presented.is_some_and(|token| bool::from(token.as_bytes().ct_eq(expected.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn only_the_exact_token_is_authorized() {
        assert!(authorized(Some(TOKEN), Some(TOKEN)));
        assert!(!authorized(Some(TOKEN), Some(&format!("{TOKEN}x"))));
        assert!(!authorized(Some(TOKEN), Some(&TOKEN[1..])));
        assert!(!authorized(Some(TOKEN), Some("")));
        assert!(!authorized(Some(TOKEN), None));
    }

    #[test]
    fn without_a_configured_token_nothing_is_authorized() {
        assert!(!authorized(None, Some("")));
        assert!(!authorized(None, Some(TOKEN)));
    }
}
