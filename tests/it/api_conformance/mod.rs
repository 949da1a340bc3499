//! The OpenAPI document against the live server: schemathesis (installed by
//! `scripts/test`) runs a property-based check of every operation in
//! `/api/openapi.json` against the real application, once as an agent and once as an
//! operator, following the document's links (stateful phase) from seeded data. Any
//! server error, undocumented status, wrong content type or body that breaks its schema
//! fails the test, with schemathesis' report. Each batch verb must have been answered
//! (not only refused) and batch claims and creates must have gone through, as the
//! metrics count them.

mod runner;
mod seed;

use crate::harness::TestApp;

/// The metrics token the run's server is started with.
const METRICS_TOKEN: &str = "conformance-metrics-token-0123456789abcdef";

#[actix_web::test]
async fn every_operation_answers_as_the_openapi_document_says_for_an_agent_and_for_an_operator() -> Result<(), String> {
    let schemathesis = runner::schemathesis();
    let app = TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(switchboard::config::SecretKey([7; 32]));
        s.metrics_token = Some(METRICS_TOKEN.into());
        // No request waits for work (long-poll `claim-next` answers at once, as past its
        // bound): the run checks what answers look like, and generated `wait_seconds`
        // would otherwise hold requests up to 30 s each, past its request timeout.
        s.long_poll_max_waiters = 0;
    })
    .await;
    // Each identity gets its own owner and data, so what one run revokes or deletes
    // cannot starve the other.
    let agent = seed::agent_world(&app).await;
    let operator = seed::operator_world(&app).await;
    let mut failed = Vec::new();
    for (who, token) in [("agent", agent), ("operator", operator)] {
        let run = runner::run(&schemathesis, &app.base, &token).await;
        // Shown with --nocapture on success, and always on failure.
        eprintln!("==== schemathesis as {who} ====\n{}", if run.passed { run.summary() } else { run.report.clone() });
        if !run.passed {
            failed.push(format!("as {who}:\n{}\n{}", run.failures(), run.summary()));
        }
    }
    // A failure is returned, not panicked: the report's failures (what was sent, what came
    // back, how to replay it) then close the test's output instead of a backtrace.
    if !failed.is_empty() {
        return Err(format!("the server disagrees with its OpenAPI document\n{}", failed.join("\n")));
    }
    batches_were_exercised(&app).await
}

/// The batch verbs were not only refused: each answered at least once, its answer
/// checked against the document, and batch claims and creates (whose examples the
/// document gives) went through; the metrics count what happened. How many completes
/// and fails went through is printed, not required: it depends on what the generated
/// data reached.
async fn batches_were_exercised(app: &TestApp) -> Result<(), String> {
    let mut counts = Vec::new();
    for (series, required) in [
        (r#"switchboard_agent_batches_total{verb="claim_next",outcome="answered"}"#, true),
        (r#"switchboard_agent_batches_total{verb="create_todo",outcome="answered"}"#, true),
        (r#"switchboard_agent_batches_total{verb="complete",outcome="answered"}"#, true),
        (r#"switchboard_agent_batches_total{verb="fail",outcome="answered"}"#, true),
        // The document's examples claim and create for real.
        (r#"switchboard_agent_batch_items_total{verb="claim_next",outcome="ok"}"#, true),
        (r#"switchboard_agent_batch_items_total{verb="create_todo",outcome="ok"}"#, true),
        // Reached only when a generated chain of links leads a claim to them.
        (r#"switchboard_agent_batch_items_total{verb="complete",outcome="ok"}"#, false),
        (r#"switchboard_agent_batch_items_total{verb="fail",outcome="ok"}"#, false),
    ] {
        counts.push((series, app.metric(METRICS_TOKEN, series).await, required));
    }
    eprintln!("==== batches ====\n{counts:#?}");
    let missing: Vec<_> = counts.iter().filter(|(_, n, required)| *required && *n == 0).collect();
    if missing.is_empty() { Ok(()) } else { Err(format!("the run never got this far with a batch verb: {missing:#?}")) }
}
