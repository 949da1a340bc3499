//! What the digest benchmark measured: one stage per table size, and the verdicts.

use std::time::Duration;

use super::plan::SectionPlan;
use crate::board::percentile_ms;
use crate::machine::{CpuSpent, Machine};

/// Growing the data tenfold may at most double the median build time.
pub const GROWTH_TARGET: f64 = 2.0;

/// The median, in milliseconds.
pub fn median_ms(samples: &[Duration]) -> f64 {
    percentile_ms(samples, 0.5)
}

/// What the digest said, summed over its lines (one stage's build).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Queues with pending work, and the pending todos on them.
    pub pending: (usize, i64),
    /// Claimed todos, and of those stalled.
    pub claimed: (i64, i64),
    /// Dead letters since the previous digest.
    pub dead: i64,
    /// Quarantined deliveries.
    pub quarantined: i64,
    /// Unheard doorbells.
    pub unheard: i64,
    /// Endpoints clocked out.
    pub clocked_out: usize,
    /// Claims deferred.
    pub deferred: i64,
    /// Undeliverable notifications.
    pub undeliverable: i64,
    /// Sections that could not be measured, with the reason.
    pub unavailable: Vec<(String, String)>,
    /// The digest's length in bytes (its body).
    pub body_bytes: usize,
    /// Whether it was quiet.
    pub quiet: bool,
}

/// One table size's figures.
#[derive(Debug, Clone)]
pub struct Stage {
    /// Todos in the table (all owners).
    pub todos: u64,
    /// Rows per table and kind: (what, all owners, the digest's owner).
    pub census: Vec<(String, i64, i64)>,
    /// Seconds spent seeding this stage (inserts and vacuum).
    pub seed_seconds: f64,
    /// Each measured build (`compose`: eight sections, each in its own transaction
    /// with its own timeouts, then the rendering).
    pub builds: Vec<Duration>,
    /// Each section's SQL alone, with the same binds, timed once after each build.
    pub sections: Vec<(&'static str, Vec<Duration>)>,
    /// Rows each section returned.
    pub section_rows: Vec<(&'static str, usize)>,
    /// What the last build found.
    pub found: Found,
    /// Where the CPU went while the builds and section timings ran.
    pub cpu: CpuSpent,
    /// The explained sections.
    pub plans: Vec<SectionPlan>,
}

/// The whole digest benchmark.
#[derive(Debug, Clone)]
pub struct DigestRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and the settings that matter.
    pub pg: (String, String),
    /// Source revision.
    pub revision: String,
    /// Measured builds per stage, and unmeasured ones before them.
    pub builds: usize,
    /// Warm-up builds.
    pub warmups: usize,
    /// Whether the bench created `queue_deferrals` (its migration is not in this tree).
    pub created_deferrals: bool,
    /// The stages, smaller first.
    pub stages: Vec<Stage>,
    /// Whole run, seconds.
    pub total_seconds: f64,
}

impl DigestRun {
    /// Median build on the larger table ÷ on the smaller one.
    pub fn growth(&self) -> Option<f64> {
        match self.stages.as_slice() {
            [small, .., large] => {
                let (a, b) = (median_ms(&small.builds), median_ms(&large.builds));
                (a > 0.0).then(|| b / a)
            }
            _ => None,
        }
    }

    /// Every (stage todos, section, table) where a plan reads a big table sequentially.
    pub fn seq_scans(&self) -> Vec<(u64, &'static str, String)> {
        self.stages
            .iter()
            .flat_map(|s| {
                s.plans.iter().flat_map(move |p| p.big_seq_scans().into_iter().map(move |t| (s.todos, p.section, t)))
            })
            .collect()
    }

    /// Small tables some plan reads sequentially (allowed), each once.
    pub fn small_seq_scans(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.stages.iter().flat_map(|s| &s.plans) {
            for t in p.seq_scanned() {
                if !p.big_seq_scans().contains(&t) && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(todos: u64, ms: &[u64], plan: &str) -> Stage {
        Stage {
            todos,
            census: Vec::new(),
            seed_seconds: 0.0,
            builds: ms.iter().map(|&m| Duration::from_millis(m)).collect(),
            sections: Vec::new(),
            section_rows: Vec::new(),
            found: Found::default(),
            cpu: CpuSpent::default(),
            plans: vec![SectionPlan { section: "pending", text: plan.into() }],
        }
    }

    #[test]
    fn growth_compares_medians_and_scans_are_listed_per_stage() {
        let run = DigestRun {
            date: String::new(),
            machine: Machine::default(),
            pg: (String::new(), String::new()),
            revision: String::new(),
            builds: 3,
            warmups: 0,
            created_deferrals: false,
            stages: vec![
                stage(10, &[4, 5, 90], "Index Scan using x on todos t\nSeq Scan on endpoints e"),
                stage(100, &[8, 9, 10], "Seq Scan on todos t"),
            ],
            total_seconds: 0.0,
        };
        assert_eq!(run.growth(), Some(9.0 / 5.0));
        assert_eq!(run.seq_scans(), vec![(100, "pending", "todos".to_owned())]);
        assert_eq!(run.small_seq_scans(), vec!["endpoints"]);
    }
}
