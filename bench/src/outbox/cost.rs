//! The outbox's cost on the dead-letter transaction: fail-at-cap transactions per
//! second on an owner with no sink, with one and with five sinks subscribed to
//! `todo.dead_lettered`. Only the transaction is timed: the todos are claimed before
//! each window (in bulk, in the shape a claim leaves), and the window's tasks call the
//! library's `Store::fail` through one pool, as the intake ceiling calls
//! `Store::create_todo`. No server runs during the windows, so no outbox worker
//! competes for the cores; the rows the windows queued are counted afterwards
//! (dead letters × sinks) and then delivered by the servers (outbox/).

use switchboard::store::Store;

use super::rig::{Failer, Line, Stack};
use crate::database::BenchDb;
use crate::intake::{self, Side};
use crate::load::Agent;
use crate::machine::Probe;
use crate::{Args, BenchResult, progress};

/// Sinks subscribed on each measured owner, in the order of the first round.
pub const SINK_COUNTS: [usize; 3] = [0, 1, 5];

/// One owner's windows, pooled.
#[derive(Debug, Clone, Default)]
pub struct CostSide {
    /// Subscribed sinks.
    pub sinks: usize,
    /// Fail-at-cap transactions, pooled over rounds, with WAL and session samples.
    pub side: Side,
    /// Dead letters the owner holds after the windows (warm-ups included).
    pub dead_letters: i64,
    /// Outbox rows queued for each of its sinks after the windows.
    pub rows_per_sink: Vec<i64>,
    /// Outbox rows of the owner's scope in all.
    pub scope_rows: i64,
}

impl CostSide {
    /// Rows missing or extra against dead letters × sinks (0: none lost, none doubled).
    pub fn row_mismatch(&self) -> i64 {
        let want = self.dead_letters * self.sinks as i64;
        let per_sink: i64 = self.rows_per_sink.iter().map(|r| (r - self.dead_letters).abs()).sum();
        let sinks_missing = (self.sinks as i64 - self.rows_per_sink.len() as i64).abs() * self.dead_letters;
        per_sink + sinks_missing + (self.scope_rows - want).abs()
    }
}

/// The measurement.
#[derive(Debug, Clone, Default)]
pub struct CostResult {
    /// Concurrent tasks (and the pool's connections).
    pub tasks: usize,
    /// Claimed todos written before each window.
    pub supply: u64,
    /// One side per entry of [`SINK_COUNTS`], in that order.
    pub sides: Vec<CostSide>,
}

impl CostResult {
    /// The side with `sinks` sinks.
    pub fn side(&self, sinks: usize) -> Option<&CostSide> {
        self.sides.iter().find(|s| s.sinks == sinks)
    }

    /// The five-sink rate as a share of the no-sink rate.
    pub fn ratio(&self) -> f64 {
        match (self.side(0), self.side(5)) {
            (Some(none), Some(five)) if none.side.window.rate() > 0.0 => {
                five.side.window.rate() / none.side.window.rate()
            }
            _ => 0.0,
        }
    }
}

/// Alternating rounds of one window per owner (`lines[i]` has `SINK_COUNTS[i]` sinks),
/// (the rows are counted by [`count_rows`] once the servers have fanned them out).
pub async fn measure(args: &Args, db: &BenchDb, store: &Store, lines: &[Line]) -> BenchResult<CostResult> {
    let probe = Probe { server_pid: 0, database: db.name().to_owned(), threads: Vec::new() };
    let mut result = CostResult {
        tasks: args.outbox_fail_tasks,
        supply: args.outbox_supply,
        sides: SINK_COUNTS.iter().map(|&sinks| CostSide { sinks, ..CostSide::default() }).collect(),
    };
    for round in 0..args.rounds {
        let mut order: Vec<usize> = (0..SINK_COUNTS.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let line = lines.get(i).ok_or("an owner per sink count is needed")?;
            let todos = super::rig::claimed_todos(db, line, args.outbox_supply, &format!("cost-{round}-{i}")).await?;
            for sql in ["VACUUM (ANALYZE) todos", "VACUUM (ANALYZE) todo_attempts", "VACUUM (ANALYZE) outbox"] {
                db.client().batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
            }
            let stack: Stack = std::rc::Rc::new(std::cell::RefCell::new(todos));
            let agents = (0..args.outbox_fail_tasks)
                .map(|_| Agent::Work(Box::new(Failer::new(store, line.endpoint, &stack))))
                .collect();
            let side = intake::window(args, db, &probe, agents).await?;
            side.window.check()?;
            let pooled = &mut result.sides[i];
            progress(&format!(
                "outbox cost: {} sink(s): {:.0} dead letters/s in this window, {:.0} WAL bytes each",
                pooled.sinks,
                side.window.rate(),
                side.wal_per_op().unwrap_or(0.0)
            ));
            pooled.side.window.merge(side.window);
            pooled.side.wal_bytes += side.wal_bytes;
            pooled.side.sessions.add(&side.sessions);
        }
    }
    Ok(result)
}

/// Counts, per owner, its dead letters and the outbox rows its sinks hold: after the
/// servers fanned the windows' dead letters out (each is recorded once in its own
/// transaction, whatever the number of sinks, and becomes one row per sink there).
pub async fn count_rows(db: &BenchDb, result: &mut CostResult, lines: &[Line]) -> BenchResult<()> {
    for (side, line) in result.sides.iter_mut().zip(lines) {
        (side.dead_letters, side.rows_per_sink, side.scope_rows) = queued(db, line).await?;
    }
    Ok(())
}

/// The owner's dead letters, the outbox rows each of its sinks holds, and the rows of
/// its scope in all.
async fn queued(db: &BenchDb, line: &Line) -> BenchResult<(i64, Vec<i64>, i64)> {
    let scope = line.owner.scope.0.to_string();
    let count = |row: tokio_postgres::Row| row.get::<_, i64>(0);
    let dead = db
        .client()
        .query_one(
            "SELECT count(*) FROM todos WHERE endpoint_id = $1::text::uuid AND dead_letter_count > 0",
            &[&line.endpoint.0.to_string()],
        )
        .await
        .map(count)
        .map_err(|e| format!("counting dead letters: {e}"))?;
    let per_sink = db
        .client()
        .query(
            "SELECT count(o.id) FROM sinks k LEFT JOIN outbox o ON o.sink_id = k.id \
             WHERE k.scope_id = $1::text::uuid GROUP BY k.id ORDER BY k.id",
            &[&scope],
        )
        .await
        .map_err(|e| format!("counting outbox rows: {e}"))?
        .into_iter()
        .map(count)
        .collect();
    let all = db
        .client()
        .query_one("SELECT count(*) FROM outbox WHERE scope_id = $1::text::uuid", &[&scope])
        .await
        .map(count)
        .map_err(|e| format!("counting outbox rows: {e}"))?;
    Ok((dead, per_sink, all))
}
