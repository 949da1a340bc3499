//! The waits the tests share: each waits for an event (a row counted, a metric, a
//! session, a lock), looking again every few milliseconds, and fails after its deadline
//! saying what it waited for and what it last saw. All are built on the one poller,
//! [`wait_until`] (testkit's, which the loopback receiver's waits use too); a wait that
//! only one test file needs is built on it where it is used.
//!
//! No test sleeps for a fixed time in place of waiting for what the time stands for.

use std::future::Future;
use std::time::Duration;

pub use testkit::wait::{DEADLINE, try_wait_until, wait_until, wait_until_every};

use super::{DbSession, TestApp, TestDb};

/// How long a wait for the database to count something lasts unless said otherwise.
pub const COUNT_DEADLINE: Duration = Duration::from_secs(15);

/// How often a metric wait scrapes `/metrics` again (a gauge can move quickly).
const METRIC_POLL: Duration = Duration::from_millis(10);

/// What a wait can ask a one-number SQL question of: a test database (a connection a
/// look), a session held open, or a test's own connection.
pub trait Counter {
    /// The one `bigint` `sql` answers.
    fn count(&self, sql: &str) -> impl Future<Output = i64>;
}

impl Counter for TestDb {
    fn count(&self, sql: &str) -> impl Future<Output = i64> {
        TestDb::count(self, sql)
    }
}

impl Counter for DbSession {
    fn count(&self, sql: &str) -> impl Future<Output = i64> {
        DbSession::count(self, sql)
    }
}

/// Waits until `sql` counts exactly `n` (up to [`COUNT_DEADLINE`]).
pub async fn wait_count(db: &impl Counter, sql: &str, n: i64) {
    wait_count_within(db, sql, n, COUNT_DEADLINE).await;
}

/// Waits until `sql` counts exactly `n`, up to `deadline`.
pub async fn wait_count_within(db: &impl Counter, sql: &str, n: i64, deadline: Duration) {
    wait_until(format!("{n} from {sql}"), deadline, async || {
        let got = db.count(sql).await;
        if got == n { Ok(()) } else { Err(format!("{got}")) }
    })
    .await;
}

/// Waits until `sql` counts at least `n`, up to `deadline`; the count then.
pub async fn wait_count_at_least(db: &impl Counter, sql: &str, n: i64, deadline: Duration) -> i64 {
    wait_until(format!("at least {n} from {sql}"), deadline, async || {
        let got = db.count(sql).await;
        if got >= n { Ok(got) } else { Err(format!("{got}")) }
    })
    .await
}

/// Waits until the metric `series` of the instance at `base` (scraped with `token`)
/// reads `value`, up to `deadline`.
pub async fn wait_metric_at(base: &str, token: &str, series: &str, value: u64, deadline: Duration) {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    wait_until_every(format!("{series} to read {value}"), deadline, METRIC_POLL, async || {
        let now = super::metric_at(&client, base, token, series).await;
        if now == value { Ok(()) } else { Err(format!("{series} {now}")) }
    })
    .await;
}

/// Waits until `app`'s metric `series` (scraped with `token`) reads `value` (up to
/// [`DEADLINE`]).
pub async fn wait_metric(app: &TestApp, token: &str, series: &str, value: u64) {
    wait_metric_at(&app.base, token, series, value, DEADLINE).await;
}

/// How long a wait for a listener session lasts (the longest any test gave it: a
/// listener reconnects on its own schedule after its session is ended).
const LISTENER_DEADLINE: Duration = Duration::from_secs(30);

/// Waits for a session of the database named `application_name` (a change listener:
/// the hook, auth or claim listener) other than the one with pid `not` (0: any); its
/// pid.
pub async fn wait_for_listener(db: &impl Counter, application_name: &str, not: i64) -> i64 {
    let sql = format!(
        "SELECT coalesce(max(pid), 0)::bigint FROM pg_stat_activity \
         WHERE application_name = '{application_name}' AND datname = current_database()"
    );
    wait_until(format!("a {application_name:?} session other than {not}"), LISTENER_DEADLINE, async || {
        let pid = db.count(&sql).await;
        if pid != 0 && pid != not { Ok(pid) } else { Err(format!("pid {pid}")) }
    })
    .await
}

/// Waits until none of the backends `pids` is alive any more (terminated sessions
/// gone), up to `deadline`.
pub async fn wait_backends_gone(db: &impl Counter, pids: &[i32], deadline: Duration) {
    let list = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let sql = format!("SELECT count(*) FROM pg_stat_activity WHERE pid IN ({list})");
    wait_until(format!("the backends {list} to be gone"), deadline, async || {
        let alive = db.count(&sql).await;
        if alive == 0 { Ok(()) } else { Err(format!("{alive} still alive")) }
    })
    .await;
}

/// Waits until at least `n` backends of `db`'s database wait on a lock (statements
/// that reached the database and are blocked there), up to `deadline`. It looks every
/// 10 ms through one session held for the wait (a connection a look could run the
/// server out of connections).
pub async fn wait_for_blocked(db: &TestDb, n: i64, deadline: Duration) {
    let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let watcher = db.session().await;
    wait_until_every(format!("{n} statements blocked on a lock"), deadline, Duration::from_millis(10), async || {
        let blocked = watcher.count(sql).await;
        if blocked >= n { Ok(()) } else { Err(format!("{blocked} blocked")) }
    })
    .await;
}
