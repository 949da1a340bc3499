//! One measured figure over the rounds of a run: each round's rate, latency and cost,
//! and their medians (what the throughput section reports).

use super::ceiling::Cost;

/// One round of a figure.
#[derive(Debug, Clone, Default)]
pub struct Round {
    /// Units done in the measured span (cycles, todos, jobs).
    pub units: u64,
    /// The span's length, seconds.
    pub seconds: f64,
    /// Median latency of a unit's round trip, ms (a cycle, a batch); 0 when not timed.
    pub p50_ms: f64,
    /// Its 99th percentile, ms.
    pub p99_ms: f64,
    /// The span's CPU and WAL.
    pub cost: Cost,
}

impl Round {
    /// Units per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 { self.units as f64 / self.seconds } else { 0.0 }
    }
}

/// A figure's rounds.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// In the order they ran.
    pub rounds: Vec<Round>,
}

/// The median of `v` (the upper middle of an even count); 0 when empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

impl Series {
    /// Adds a round.
    pub fn push(&mut self, round: Round) {
        self.rounds.push(round);
    }

    /// Whether no round ran.
    pub fn is_empty(&self) -> bool {
        self.rounds.is_empty()
    }

    /// The median of `f` over the rounds.
    pub fn median(&self, f: impl Fn(&Round) -> f64) -> f64 {
        median(self.rounds.iter().map(f).collect())
    }

    /// The median rate.
    pub fn rate(&self) -> f64 {
        self.median(Round::rate)
    }

    /// The median of a per-unit cost figure that every round has, else `None`.
    pub fn median_of(&self, f: impl Fn(&Cost) -> Option<f64>) -> Option<f64> {
        let v: Option<Vec<f64>> = self.rounds.iter().map(|r| f(&r.cost)).collect();
        v.filter(|v| !v.is_empty()).map(median)
    }

    /// The median of a per-unit cost figure.
    pub fn cost_median(&self, f: impl Fn(&Cost) -> f64) -> f64 {
        self.median(|r| f(&r.cost))
    }

    /// The rounds' costs added up (for shares of the machine: busy, noise).
    pub fn pooled(&self) -> Cost {
        let mut c = Cost::default();
        for r in &self.rounds {
            c.add(&r.cost);
        }
        c
    }

    /// The highest share of all cores other processes took in any round.
    pub fn worst_noise(&self) -> f64 {
        self.rounds.iter().map(|r| r.cost.cpu.other_share()).fold(0.0, f64::max)
    }

    /// Each round's rate, "a / b / c" with digits grouped by `group`.
    pub fn rates_text(&self, group: impl Fn(f64) -> String) -> String {
        self.rounds.iter().map(|r| group(r.rate())).collect::<Vec<_>>().join(" / ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(units: u64, seconds: f64) -> Round {
        Round { units, seconds, ..Round::default() }
    }

    #[test]
    fn the_median_of_three_rounds_is_the_middle_one() {
        let s = Series { rounds: vec![round(300, 1.0), round(100, 1.0), round(200, 1.0)] };
        assert_eq!(s.rate(), 200.0);
    }

    #[test]
    fn a_cost_figure_missing_in_one_round_has_no_median() {
        let mut read = Cost { units: 10, spans: 1, split_spans: 1, ..Cost::default() };
        read.split.record_bytes = 1000;
        let unread = Cost { units: 10, spans: 1, ..Cost::default() };
        let s =
            Series { rounds: vec![Round { cost: read, ..round(10, 1.0) }, Round { cost: unread, ..round(10, 1.0) }] };
        assert_eq!(s.median_of(Cost::wal_without_fpi_per_unit), None);
        let both = Series { rounds: vec![Round { cost: read, ..round(10, 1.0) }] };
        assert_eq!(both.median_of(Cost::wal_without_fpi_per_unit), Some(100.0));
    }
}
