//! The fault run: three replicas behind nginx, agents cycling through it, signed
//! deliveries feeding it, a hook and a Gotify-style sink receiving, while the run kills
//! one replica and starts it again, stops and starts PostgreSQL, and (when given a
//! binary of the previous release) has a replica of it join and leave. Then it lets the
//! fleet finish what it holds and judges the result (verdict.rs).

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use switchboard::domain::ids::EndpointId;

use super::agent::Agent;
use super::cluster::Cluster;
use super::feeder;
use super::journal::{Fault, Journal};
use super::replica::{Replica, free_port};
use super::rig::{Rig, Shape, on_cluster, tail};
use super::setup::{self, Receivers};
use super::verdict::{self, Evidence, Verdict};
use crate::BenchResult;

/// When things happen, from the start of the load.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Agents, each with one keep-alive connection to the balancer.
    pub agents: usize,
    /// Deliveries per second.
    pub rate: u32,
    /// The replica `r2` is killed (SIGKILL) …
    pub kill_at: Duration,
    /// … and started again this long after.
    pub restart_after: Duration,
    /// PostgreSQL is stopped (`pg_ctl stop -m fast`) …
    pub database_at: Duration,
    /// … and started again this long after; this many times, 8 s apart.
    pub database_down: Duration,
    /// How many times the database is stopped and started.
    pub database_restarts: u32,
    /// A replica of the previous release: its binary, when it joins and when it leaves.
    pub previous: Option<(PathBuf, Duration, Duration)>,
    /// The feeder stops here; the agents drain what is left.
    pub feed_until: Duration,
    /// The longest the fleet may take to finish after the feeder stops.
    pub settle: Duration,
}

/// The time between two database restarts of one run.
const RESTART_SPACING: Duration = Duration::from_secs(8);

impl Plan {
    /// This plan with the database restarted `n` times (at least once); the feed runs
    /// on until 15 s after the last restart.
    pub fn with_database_restarts(mut self, n: u32) -> Plan {
        self.database_restarts = n.max(1);
        let last = self.database_at + RESTART_SPACING * (self.database_restarts - 1);
        self.feed_until = self.feed_until.max(last + Duration::from_secs(15));
        self
    }

    /// The CI run: about a minute of load on a debug build.
    pub fn check() -> Plan {
        Plan {
            agents: 8,
            rate: 20,
            kill_at: Duration::from_secs(10),
            restart_after: Duration::from_secs(1),
            database_at: Duration::from_secs(28),
            database_down: Duration::from_secs(2),
            database_restarts: 1,
            previous: None,
            feed_until: Duration::from_secs(48),
            settle: Duration::from_secs(60),
        }
    }

    /// The bench's run on a release build, with the previous release joining.
    pub fn bench(previous: Option<PathBuf>) -> Plan {
        Plan {
            agents: 16,
            rate: 100,
            kill_at: Duration::from_secs(25),
            restart_after: Duration::from_secs(1),
            database_at: Duration::from_secs(45),
            database_down: Duration::from_secs(2),
            database_restarts: 1,
            previous: previous.map(|bin| (bin, Duration::from_secs(8), Duration::from_secs(65))),
            feed_until: Duration::from_secs(80),
            settle: Duration::from_secs(60),
        }
    }
}

/// What the run found.
pub struct FaultRun {
    /// The plan it followed.
    pub plan: Plan,
    /// The verdict.
    pub verdict: Verdict,
    /// Seconds from the start of the load until the fleet had finished everything.
    pub seconds: f64,
    /// Seconds from the end of the feed until every todo had ended.
    pub drain_seconds: f64,
    /// Seconds from the start of the load until the outbox had finished.
    pub outbox_seconds: f64,
}

/// The settings of the fault run's replicas: short lease sweeps, so a lost claim is
/// claimed again within seconds; quick outbox polls and retries, so a killed replica's
/// claimed messages are sent again within the run; hook and sink rates far above the
/// run's; sink budgets liftable to the hard bounds.
pub fn settings() -> Vec<(&'static str, String)> {
    vec![
        ("SWITCHBOARD_LEASE_REAPER_INTERVAL_MS", "500".into()),
        ("SWITCHBOARD_RETRY_SCHEDULER_INTERVAL_MS", "1000".into()),
        ("SWITCHBOARD_OUTBOX_POLL_MS", "500".into()),
        ("SWITCHBOARD_OUTBOX_RETRY_BASE_MS", "1000".into()),
        ("SWITCHBOARD_NOTIFY_HOOK_RATE_PER_MINUTE", "10000000".into()),
        ("SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR", "3600000".into()),
        ("SWITCHBOARD_SINK_BURST_MAX", "100000".into()),
    ]
}

/// Runs the plan with this build's `bin`; `keep` keeps the run directory whatever the
/// verdict (a failed verdict keeps it anyway).
pub async fn run(bin: &std::path::Path, plan: Plan, keep: bool) -> BenchResult<FaultRun> {
    let receivers = Receivers::start()?;
    let shape = Shape { bin: bin.to_owned(), replicas: 3, extra: settings(), access_log: true, max_connections: 200 };
    let mut rig = Rig::start(&shape).await?;
    let outcome = drive(&mut rig, &receivers, bin, &plan).await;
    let keep = keep || outcome.as_ref().map_or(true, |r| !r.verdict.passed());
    if let Err(e) = &outcome {
        for r in &rig.replicas {
            crate::progress(&format!(
                "fleet: {} log tail:\n{}",
                r.name,
                tail(&rig.dir.join(format!("{}.log", r.name)), 5)
            ));
        }
        crate::progress(&format!("fleet: the run failed: {e}"));
    }
    let stopped = rig.stop(keep).await;
    let run = outcome?;
    stopped?;
    Ok(run)
}

async fn drive(rig: &mut Rig, receivers: &Receivers, bin: &std::path::Path, plan: &Plan) -> BenchResult<FaultRun> {
    let journal = Rc::new(Journal::new());
    let base = rig.balancer.base();
    let owner = setup::create_owner(bin, &rig.database_url(), &rig.recipe.secret_key).await?;
    let made = setup::run(&base, &owner, receivers, &journal).await?;
    let endpoint: EndpointId = made.endpoint.parse().map_err(|e| format!("endpoint id {}: {e}", made.endpoint))?;
    crate::progress(&format!(
        "fleet: {} replicas behind nginx at {base}; {} agents, {} deliveries/s",
        rig.replicas.len(),
        plan.agents,
        plan.rate
    ));

    let started = Instant::now();
    let (stop_agents, stop_feed) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let agents: Vec<_> = (0..plan.agents)
        .map(|n| actix_rt::spawn(Agent::new(n, &base, &made.agent_token, &journal, &stop_agents).run()))
        .collect();
    let run_id = format!("{:08x}", rand::random::<u32>());
    let feeder = actix_rt::spawn(feeder::run(
        base.clone(),
        made.work.clone(),
        made.doomed.clone(),
        plan.rate,
        journal.clone(),
        stop_feed.clone(),
        run_id,
    ));

    faults(rig, plan, &journal, started).await?;
    tokio::time::sleep_until((started + plan.feed_until).into()).await;
    stop_feed.set(true);
    let _ = feeder.await;
    let fed = Instant::now();
    journal.note("feeder stopped; the agents drain what is left");

    let drained = wait_for_endings(rig, endpoint, plan.settle).await;
    let drain_seconds = fed.elapsed().as_secs_f64();
    stop_agents.set(true);
    for a in agents {
        let _ = a.await;
    }
    drained?;
    journal.note("every todo has ended");
    let last_kill = journal.faults().iter().filter(|(_, f)| matches!(f, Fault::Killed(_))).map(|(at, _)| *at).max();
    wait_for_outbox(rig, endpoint, receivers, last_kill).await?;
    journal.note("the outbox is done");
    let outbox_seconds = started.elapsed().as_secs_f64();
    // Hooks are retried for up to about 7 s; wait until none has come for 2 s.
    receivers.hooks.wait_tracked(u64::MAX, Duration::from_secs(2)).await;
    let seconds = started.elapsed().as_secs_f64();

    let db = rig.connect().await?;
    let todos = verdict::todos(&db, endpoint.0, &journal).await?;
    let outbox = verdict::outbox(&db).await?;
    let unsent = db
        .query_one(
            "SELECT count(*) FROM todos t WHERE t.endpoint_id = $1::text::uuid AND t.dead_lettered_at IS NOT NULL \
               AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.todo_id = t.id AND o.status = 'sent')",
            &[&endpoint.0.to_string()],
        )
        .await
        .map_err(|e| format!("reading the sent outbox rows: {e}"))?
        .get::<_, i64>(0);
    let evidence = Evidence {
        journal: &journal,
        todos: &todos,
        outbox,
        unsent,
        hooks: &receivers.hooks,
        gotify: &receivers.gotify,
    };
    let verdict = verdict::judge(&evidence);
    Ok(FaultRun { plan: plan.clone(), verdict, seconds, drain_seconds, outbox_seconds })
}

/// One step of the script.
enum Step {
    Kill,
    StopDatabase,
    PreviousJoins,
    PreviousLeaves,
}

/// Makes the plan's faults happen at their times, in order.
async fn faults(rig: &mut Rig, plan: &Plan, journal: &Journal, started: Instant) -> BenchResult<()> {
    let mut steps = vec![(plan.kill_at, Step::Kill)];
    for i in 0..plan.database_restarts.max(1) {
        steps.push((plan.database_at + RESTART_SPACING * i, Step::StopDatabase));
    }
    if let Some((_, joins, leaves)) = &plan.previous {
        steps.push((*joins, Step::PreviousJoins));
        steps.push((*leaves, Step::PreviousLeaves));
    }
    steps.sort_by_key(|(at, _)| *at);
    let mut previous: Option<Replica> = None;
    for (at, step) in steps {
        tokio::time::sleep_until((started + at).into()).await;
        match step {
            Step::Kill => {
                let victim = rig.replicas.get_mut(1).ok_or("no second replica to kill")?;
                journal.fault(Fault::Killed(victim.port()));
                victim.kill().await?;
                journal.fault(Fault::Gone(victim.port()));
                tokio::time::sleep(plan.restart_after).await;
                victim.restart()?;
                journal.fault(Fault::Restarted(victim.port()));
                victim.wait_ready(Duration::from_secs(60)).await?;
                journal.fault(Fault::Ready(victim.port()));
            }
            Step::StopDatabase => {
                journal.fault(Fault::DatabaseStopping);
                on_cluster(&rig.cluster, Cluster::stop).await?;
                tokio::time::sleep(plan.database_down).await;
                on_cluster(&rig.cluster, Cluster::start).await?;
                journal.fault(Fault::DatabaseUp);
            }
            Step::PreviousJoins => {
                let Some((bin, _, _)) = &plan.previous else { continue };
                let mut prev = Replica::spawn("previous", bin, free_port()?, &rig.recipe)?;
                prev.wait_ready(Duration::from_secs(60)).await?;
                let mut ports: Vec<u16> = rig.replicas.iter().map(Replica::port).collect();
                ports.push(prev.port());
                rig.balancer.reload(&ports).await?;
                journal.fault(Fault::Reloaded);
                journal.fault(Fault::PreviousJoined(prev.port()));
                previous = Some(prev);
            }
            Step::PreviousLeaves => {
                let Some(prev) = previous.take() else { continue };
                let ports: Vec<u16> = rig.replicas.iter().map(Replica::port).collect();
                rig.balancer.reload(&ports).await?;
                journal.fault(Fault::Reloaded);
                journal.fault(Fault::PreviousLeft(prev.port()));
                prev.stop().await?;
            }
        }
    }
    Ok(())
}

/// Waits until every todo of the fleet's endpoint has ended (none pending, claimed or
/// waiting for a retry), reconnecting when the database went away.
async fn wait_for_endings(rig: &Rig, endpoint: EndpointId, settle: Duration) -> BenchResult<()> {
    let deadline = Instant::now() + settle;
    let mut open = u64::MAX;
    loop {
        if let Ok(db) = rig.connect().await
            && let Ok(row) = db
                .query_one(
                    "SELECT count(*) FROM todos WHERE endpoint_id = $1::text::uuid \
                       AND NOT (state = 'done' OR (state = 'failed' AND next_retry_at IS NULL))",
                    &[&endpoint.0.to_string()],
                )
                .await
        {
            open = row.get::<_, i64>(0) as u64;
            if open == 0 {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err(format!("{open} todo(s) still open {} s after the feed stopped", settle.as_secs()));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until the outbox has drained and the Gotify receiver holds a message for every
/// dead letter, or until well past the time a killed replica's claimed messages lapse
/// (the outbox's claims last 60 s): the verdict then says what is missing.
async fn wait_for_outbox(
    rig: &Rig,
    endpoint: EndpointId,
    receivers: &Receivers,
    last_kill: Option<Instant>,
) -> BenchResult<()> {
    let lapse = last_kill.map(|k| k + Duration::from_secs(75));
    let deadline = lapse.map_or(Instant::now(), |l| l.max(Instant::now())) + Duration::from_secs(20);
    let db = rig.connect().await?;
    loop {
        let (by_status, records) = verdict::outbox(&db).await?;
        let dead = db
            .query_one(
                "SELECT count(*) FROM todos WHERE endpoint_id = $1::text::uuid AND dead_lettered_at IS NOT NULL",
                &[&endpoint.0.to_string()],
            )
            .await
            .map_err(|e| format!("counting dead letters: {e}"))?
            .get::<_, i64>(0) as usize;
        if verdict::drained(&by_status, records) && receivers.gotify.distinct() >= dead {
            return Ok(());
        }
        if Instant::now() > deadline {
            crate::progress("fleet: the outbox did not finish in time; judging what is there");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
