//! The server's `/metrics` (Prometheus text), read with the run's metrics token: how
//! many notifications were delivered, failed or dropped, and how many signals the
//! store's emitter dropped, so a throughput figure never hides a loss.

use std::time::Duration;

use crate::BenchResult;
use crate::server::Server;

/// The notify channel's counters at one moment (or their growth between two).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NotifyCounts {
    /// Notifications a hook answered with a 2xx.
    pub delivered: f64,
    /// Notifications whose attempts all failed.
    pub failed: f64,
    /// Notifications never attempted: over the rate, a full mailbox, or the in-flight
    /// or lookup caps.
    pub dropped: f64,
    /// Signals the store's emitter dropped because the dispatcher's mailbox was full.
    pub signals_dropped: f64,
    /// Delivery attempts (retries included).
    pub attempts: f64,
}

impl NotifyCounts {
    /// The counters in a Prometheus text exposition.
    pub fn parse(text: &str) -> NotifyCounts {
        let mut c = NotifyCounts::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else { continue };
            let Ok(value) = value.parse::<f64>() else { continue };
            let name = series.split('{').next().unwrap_or(series);
            match name {
                "switchboard_notify_hook_notifications_total" => {
                    if series.contains("outcome=\"delivered\"") {
                        c.delivered += value;
                    } else if series.contains("outcome=\"failed\"") {
                        c.failed += value;
                    } else if series.contains("outcome=\"dropped\"") {
                        c.dropped += value;
                    }
                }
                "switchboard_signals_dropped_total" | "switchboard_signals_dropped" => c.signals_dropped += value,
                "switchboard_notify_hook_attempts_total" => c.attempts += value,
                _ => {}
            }
        }
        c
    }

    /// What grew from `earlier` to `self`.
    pub fn since(&self, earlier: &NotifyCounts) -> NotifyCounts {
        NotifyCounts {
            delivered: self.delivered - earlier.delivered,
            failed: self.failed - earlier.failed,
            dropped: self.dropped - earlier.dropped,
            signals_dropped: self.signals_dropped - earlier.signals_dropped,
            attempts: self.attempts - earlier.attempts,
        }
    }

    /// Adds another span's growth.
    pub fn add(&mut self, o: &NotifyCounts) {
        self.delivered += o.delivered;
        self.failed += o.failed;
        self.dropped += o.dropped;
        self.signals_dropped += o.signals_dropped;
        self.attempts += o.attempts;
    }
}

/// Reads the server's counters now.
pub async fn notify_counts(server: &Server) -> BenchResult<NotifyCounts> {
    Ok(NotifyCounts::parse(&metrics_text(server).await?))
}

/// The sum of every series of metric `name` (its `_total` suffix included, if any)
/// whose labels contain each of `labels` (`outcome="sent"`), in a Prometheus text
/// exposition.
pub fn series_sum(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(series, _)| series.split('{').next() == Some(name))
        .filter(|(series, _)| labels.iter().all(|want| series.contains(want)))
        .filter_map(|(_, value)| value.parse::<f64>().ok())
        .sum()
}

/// The server's `/metrics` answer (Prometheus text), read with the run's token.
pub async fn metrics_text(server: &Server) -> BenchResult<String> {
    let client = awc::Client::builder().timeout(Duration::from_secs(10)).finish();
    let mut resp = client
        .get(format!("{}/metrics", server.base()))
        .insert_header(("authorization", format!("Bearer {}", server.metrics_token())))
        .send()
        .await
        .map_err(|e| format!("reading /metrics: {e}"))?;
    let body = resp.body().limit(4 << 20).await.map_err(|e| format!("reading /metrics: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("/metrics answered {}", resp.status()));
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notify_counters_are_summed_over_types_and_read_by_outcome() {
        let text = "# HELP x\n\
            switchboard_notify_hook_notifications_total{type=\"todo.ready\",outcome=\"delivered\"} 7\n\
            switchboard_notify_hook_notifications_total{type=\"todo.dead_lettered\",outcome=\"delivered\"} 3\n\
            switchboard_notify_hook_notifications_total{type=\"todo.ready\",outcome=\"dropped\"} 2\n\
            switchboard_notify_hook_attempts_total{result=\"delivered\"} 11\n\
            switchboard_signals_dropped_total 1\n";
        let c = NotifyCounts::parse(text);
        assert_eq!(
            c,
            NotifyCounts { delivered: 10.0, failed: 0.0, dropped: 2.0, signals_dropped: 1.0, attempts: 11.0 }
        );
    }

    #[test]
    fn a_series_sum_adds_the_series_whose_labels_match() {
        let text = "# TYPE switchboard_sink_deliveries counter\n\
            switchboard_sink_deliveries_total{event=\"todo.dead_lettered\",outcome=\"sent\"} 40\n\
            switchboard_sink_deliveries_total{event=\"relay.exhausted\",outcome=\"sent\"} 2\n\
            switchboard_sink_deliveries_total{event=\"todo.dead_lettered\",outcome=\"held\"} 5\n\
            switchboard_outbox_depth 7\n";
        assert_eq!(series_sum(text, "switchboard_sink_deliveries_total", &["outcome=\"sent\""]), 42.0);
        assert_eq!(series_sum(text, "switchboard_outbox_depth", &[]), 7.0);
        assert_eq!(series_sum(text, "switchboard_sink_deliveries", &[]), 0.0);
    }
}
