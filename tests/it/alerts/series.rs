//! Every `switchboard_*` series `deploy/prometheus/alerts.yml` names (in an expression or
//! in the text that tells the operator what to look at) is a family on a running
//! server's `/metrics`: an alert on a series that does not exist never fires.

use std::collections::BTreeSet;

use super::*;
use crate::harness::wait::{DEADLINE, wait_until};

/// The alert rules, read from the repository (not built in: the file is the product).
fn rules() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/prometheus/alerts.yml");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every metric name in `text`: `switchboard_` and the name characters after it.
fn names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("switchboard_") {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        // Part of a longer word (`xswitchboard_…`) is not a name.
        if !rest[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            out.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    out
}

/// The families a `/metrics` text declares (`# TYPE name kind`).
fn families(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.split(' ').next().map(str::to_owned)).collect()
}

#[test]
fn names_are_read_whole_from_expressions_and_prose() {
    let text = "expr: sum(rate(switchboard_a_total{x=\"y\"}[5m])) / switchboard_b\n\
                see switchboard_c_seconds. notswitchboard_d";
    let got: Vec<String> = names(text).into_iter().collect();
    assert_eq!(got, ["switchboard_a_total", "switchboard_b", "switchboard_c_seconds"]);
}

#[actix_web::test]
async fn every_series_an_alert_names_is_a_family_on_a_running_servers_metrics() {
    let named = names(&rules());
    assert!(named.len() >= 10, "the rules name too few series: {named:?}");
    let app = spawn_with(|_| {}).await;
    // A listener's gauge is made when it first reports: waited for, like any family.
    wait_until("every series the alert rules name on /metrics", DEADLINE, async || {
        let shown = families(&scrape(&app).await);
        let missing: Vec<&String> = named.iter().filter(|n| !shown.contains(*n)).collect();
        if missing.is_empty() { Ok(()) } else { Err(format!("missing {missing:?}")) }
    })
    .await;
}
