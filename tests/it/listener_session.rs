//! One listener session per instance: a single connection outside the pool LISTENs for
//! credential changes, claim wake-ups, hook changes and outbox wake-ups, and when it is
//! lost every follower is off until one new session is back for all of them.

use crate::harness::TestApp;
use crate::harness::wait::{wait_for_listener, wait_metric};
use std::time::Duration;
use switchboard::db::listen::LISTENER_SESSION_NAME;
use testkit::wait::wait_until;

const TOKEN: &str = "metrics-token-for-the-listener-session";

/// The listening gauge of one channel's follower.
fn listening(channel: &str) -> String {
    format!(r#"switchboard_change_listener_listening{{listener="{channel}"}}"#)
}

const CHANNELS: [&str; 4] = ["auth", "claims", "hooks", "outbox"];

/// Sessions of the app's database that name themselves as any listener, of this
/// release or of the one-session-per-concern releases before it.
const LISTENER_SESSIONS: &str = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
     AND application_name LIKE 'switchboard%listener'";

#[actix_web::test]
async fn an_instance_listens_on_every_channel_through_one_session_and_reconnects_it_as_one() {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(TOKEN.into())).await;
    let first = wait_for_listener(&app.db, LISTENER_SESSION_NAME, 0).await;
    for channel in CHANNELS {
        wait_metric(&app, TOKEN, &listening(channel), 1).await;
    }
    assert_eq!(app.db.count(LISTENER_SESSIONS).await, 1, "one listening session, not one per concern");

    // The session dies (a failover, an operator's pg_terminate_backend): all four
    // followers are off, then one new session brings all four back.
    app.db.count(&format!("SELECT count(*) FROM pg_terminate_backend({first}::int) t(ok) WHERE ok")).await;
    let second = wait_for_listener(&app.db, LISTENER_SESSION_NAME, first).await;
    assert_ne!(second, first);
    for channel in CHANNELS {
        wait_metric(&app, TOKEN, &listening(channel), 1).await;
    }
    wait_until("the ended session to be gone", Duration::from_secs(10), async || {
        match app.db.count(LISTENER_SESSIONS).await {
            1 => Ok(()),
            n => Err(format!("{n} listener sessions")),
        }
    })
    .await;
}
