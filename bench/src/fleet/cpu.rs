//! Where a fleet's CPU went, read from `/proc`: the replicas (summed), nginx (its master
//! and workers), the fleet's own PostgreSQL cluster (its postmaster, every process it
//! started, and those it has reaped), this bench, and everything else. Only the fleet's
//! cluster is counted: the machine's cluster on 5432 is someone else's.

use std::fs;

/// Cumulative counters at one instant, in clock ticks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// The replicas.
    pub replicas: u64,
    /// nginx.
    pub nginx: u64,
    /// The fleet's PostgreSQL cluster.
    pub postgres: u64,
    /// This process.
    pub bench: u64,
    /// All cores busy.
    pub busy: u64,
    /// All cores, any state.
    pub total: u64,
}

/// CPU seconds spent between two samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// The replicas.
    pub replicas_s: f64,
    /// nginx.
    pub nginx_s: f64,
    /// PostgreSQL.
    pub postgres_s: f64,
    /// The bench (the agents' client side).
    pub bench_s: f64,
    /// Everything else on the machine.
    pub other_s: f64,
    /// Cores × wall time.
    pub capacity_s: f64,
}

impl Spent {
    /// The CPU between `a` and `b`.
    pub fn between(a: Sample, b: Sample) -> Spent {
        let tick = 1.0 / ticks_per_second();
        let s = |x: u64, y: u64| y.saturating_sub(x) as f64 * tick;
        let (replicas_s, nginx_s, postgres_s, bench_s) =
            (s(a.replicas, b.replicas), s(a.nginx, b.nginx), s(a.postgres, b.postgres), s(a.bench, b.bench));
        Spent {
            replicas_s,
            nginx_s,
            postgres_s,
            bench_s,
            other_s: (s(a.busy, b.busy) - replicas_s - nginx_s - postgres_s - bench_s).max(0.0),
            capacity_s: s(a.total, b.total),
        }
    }

    /// Adds another span.
    pub fn add(&mut self, o: &Spent) {
        self.replicas_s += o.replicas_s;
        self.nginx_s += o.nginx_s;
        self.postgres_s += o.postgres_s;
        self.bench_s += o.bench_s;
        self.other_s += o.other_s;
        self.capacity_s += o.capacity_s;
    }

    /// Share of all cores busy.
    pub fn busy_share(&self) -> f64 {
        self.share(self.replicas_s + self.nginx_s + self.postgres_s + self.bench_s + self.other_s)
    }

    /// Share of all cores taken by other processes.
    pub fn other_share(&self) -> f64 {
        self.share(self.other_s)
    }

    fn share(&self, s: f64) -> f64 {
        if self.capacity_s > 0.0 { s / self.capacity_s } else { 0.0 }
    }
}

/// What to sample.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// The replicas' pids.
    pub replicas: Vec<u32>,
    /// nginx's master.
    pub nginx: u32,
    /// The postmaster.
    pub postmaster: u32,
}

/// (ppid, own ticks, reaped children's ticks) of one process.
fn stat(pid: u32) -> Option<(u32, u64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = text.rfind(')')?;
    let f: Vec<u64> = text[close + 1..].split_whitespace().skip(1).map(|v| v.parse().unwrap_or(0)).collect();
    // After `comm` and the state: ppid first; utime/stime 11th/12th; cutime/cstime 13th/14th.
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    Some((at(0) as u32, at(10) + at(11), at(12) + at(13)))
}

/// Every live process's (pid, ppid, own ticks).
fn processes() -> Vec<(u32, u32, u64)> {
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, own, _)| (pid, ppid, own)))
        .collect()
}

/// A parent's own ticks, its reaped children's, and its live children's own.
fn tree(parent: u32, all: &[(u32, u32, u64)]) -> u64 {
    if parent == 0 {
        return 0;
    }
    let (own, reaped) = stat(parent).map_or((0, 0), |(_, own, reaped)| (own, reaped));
    own + reaped + all.iter().filter(|(_, ppid, _)| *ppid == parent).map(|(_, _, t)| t).sum::<u64>()
}

impl Probe {
    /// Samples now.
    pub fn sample(&self) -> Sample {
        let all = processes();
        let (busy, total) = machine();
        Sample {
            replicas: self.replicas.iter().filter_map(|p| stat(*p)).map(|(_, own, _)| own).sum(),
            nginx: tree(self.nginx, &all),
            postgres: tree(self.postmaster, &all),
            bench: stat(std::process::id()).map_or(0, |(_, own, _)| own),
            busy,
            total,
        }
    }
}

fn ticks_per_second() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().filter(|t| *t > 0).unwrap_or(100) as f64
}

/// (busy, total) ticks over all cores.
fn machine() -> (u64, u64) {
    let text = fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> =
        text.lines().next().unwrap_or_default().split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    let total: u64 = f.iter().take(8).sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (total.saturating_sub(idle), total)
}
