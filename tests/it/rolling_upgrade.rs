//! A rolling upgrade: this release keeps serving while a newer release's migration
//! changes a table under it.

use futures_util::future::join_all;

use crate::db_restart::{Seen, cycle};
use crate::harness::TestApp;

/// Concurrent agents: enough to have several pooled connections prepare the hot
/// statements before the schema changes.
const AGENTS: usize = 4;

#[actix_web::test]
async fn a_running_instance_keeps_serving_when_a_newer_release_adds_a_column_to_todos() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let mut agents = Vec::new();
    for i in 0..AGENTS {
        agents.push(app.agent(owner.scope, &format!("agent-{i}")).await);
    }
    let seen = Seen::default();
    let warm = join_all(agents.iter().map(|ep| async { cycle(&app, ep, &seen).await })).await;
    assert!(warm.iter().all(|ok| *ok), "{:?}", seen.statuses.take());

    // What an additive migration of the next release does while this one runs.
    app.db.exec("ALTER TABLE todos ADD COLUMN added_by_a_newer_release integer").await;

    let mut last = Vec::new();
    for _ in 0..6 {
        last = join_all(agents.iter().map(|ep| cycle(&app, ep, &seen))).await;
    }
    let statuses = seen.statuses.take();
    let errors: Vec<_> = statuses.iter().filter(|(_, s, _)| *s >= 500 && *s != 503).collect();
    assert!(errors.is_empty(), "{} server errors other than 503, e.g. {:?}", errors.len(), errors.first());
    assert!(last.iter().all(|ok| *ok), "agents still failing after the change: {:?}", &statuses[statuses.len() - 6..]);
}
