//! The OpenAPI document against the live server: schemathesis (installed by
//! `scripts/test`) runs a property-based check of every operation in
//! `/api/openapi.json` against the real application, once as an agent and once as an
//! operator, following the document's links (stateful phase) from seeded data. Any
//! server error, undocumented status, wrong content type or body that breaks its schema
//! fails the test, with schemathesis' report.

mod runner;
mod seed;

use crate::harness::TestApp;

#[actix_web::test]
async fn every_operation_answers_as_the_openapi_document_says_for_an_agent_and_for_an_operator() {
    let schemathesis = runner::schemathesis();
    let app = TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(switchboard::config::SecretKey([7; 32]));
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
            failed.push(format!("as {who}:\n{}", run.summary()));
        }
    }
    assert!(failed.is_empty(), "the server disagrees with its OpenAPI document\n{}", failed.join("\n"));
}
