//! What the machine is and where its CPU time went, read from `/proc`. The CPU split
//! (server, PostgreSQL backends, this client, everything else) is what tells a slow
//! figure's cause apart on a small shared box where all of them compete for the same
//! cores.

use std::fs;

/// The machine a run was measured on.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// Logical cores (`nproc`).
    pub cores: usize,
    /// CPU model name.
    pub cpu_model: String,
    /// Total memory in KiB.
    pub memory_kib: u64,
    /// Kernel release (`uname -r`).
    pub kernel: String,
}

impl Machine {
    /// "2 cores (AMD EPYC), 23.5 GiB memory, kernel 6.1": what the benchmark docs say
    /// of the machine.
    pub fn summary(&self) -> String {
        format!(
            "{} cores ({}), {:.1} GiB memory, kernel {}",
            self.cores,
            self.cpu_model,
            self.memory_kib as f64 / 1024.0 / 1024.0,
            self.kernel
        )
    }

    /// Reads the machine's description.
    pub fn describe() -> Machine {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        Machine {
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            cpu_model,
            memory_kib,
            kernel: fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_owned(),
        }
    }
}

/// What to sample: the server process and the benchmark database's backends.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The server's pid.
    pub server_pid: u32,
    /// The benchmark database's name, which its backends show in their process title.
    pub database: String,
    /// Threads of this process whose CPU is also counted on its own (the in-process
    /// notify channel's arbiter); empty for most measurements.
    pub threads: Vec<u32>,
}

impl Probe {
    /// Samples the CPU counters now.
    pub fn sample(&self) -> CpuSample {
        let (busy, total) = machine_ticks();
        CpuSample {
            server: process_ticks(&format!("/proc/{}/stat", self.server_pid)).map(|(_, t)| t).unwrap_or(0),
            postgres: backend_ticks(&self.database),
            bench: process_ticks("/proc/self/stat").map(|(_, t)| t).unwrap_or(0),
            threads: thread_ticks(&self.threads),
            busy,
            total,
        }
    }
}

/// Cumulative CPU counters at one instant, in clock ticks.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    /// The server process.
    pub server: u64,
    /// The PostgreSQL backends connected to the benchmark database.
    pub postgres: u64,
    /// This benchmark process (the clients, or the raw SQL pool's callers).
    pub bench: u64,
    /// The probe's threads of this process (part of `bench`).
    pub threads: u64,
    /// All cores busy (not idle, not waiting on I/O).
    pub busy: u64,
    /// All cores, any state.
    pub total: u64,
}

/// Where CPU time went during a span.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSpent {
    /// Server CPU seconds.
    pub server_s: f64,
    /// CPU seconds of the benchmark database's PostgreSQL backends.
    pub postgres_s: f64,
    /// Benchmark-process CPU seconds.
    pub bench_s: f64,
    /// Of `bench_s`, the CPU seconds of the probe's threads.
    pub threads_s: f64,
    /// CPU seconds of everything else on the machine (other users of a shared box,
    /// PostgreSQL's own writer processes, the kernel's I/O threads).
    pub other_s: f64,
    /// All cores' seconds in the span (busy or not): cores × wall time.
    pub capacity_s: f64,
}

impl CpuSpent {
    /// The CPU spent between two samples.
    pub fn between(a: CpuSample, b: CpuSample) -> CpuSpent {
        let tick = 1.0 / clock_ticks_per_second();
        let secs = |from: u64, to: u64| to.saturating_sub(from) as f64 * tick;
        let (server_s, postgres_s, bench_s) =
            (secs(a.server, b.server), secs(a.postgres, b.postgres), secs(a.bench, b.bench));
        CpuSpent {
            server_s,
            postgres_s,
            bench_s,
            threads_s: secs(a.threads, b.threads),
            other_s: (secs(a.busy, b.busy) - server_s - postgres_s - bench_s).max(0.0),
            capacity_s: secs(a.total, b.total),
        }
    }

    /// Adds another span's CPU.
    pub fn add(&mut self, o: &CpuSpent) {
        self.server_s += o.server_s;
        self.postgres_s += o.postgres_s;
        self.bench_s += o.bench_s;
        self.threads_s += o.threads_s;
        self.other_s += o.other_s;
        self.capacity_s += o.capacity_s;
    }

    /// Share of all cores that was busy, 0–1.
    pub fn busy_share(&self) -> f64 {
        self.share(self.server_s + self.postgres_s + self.bench_s + self.other_s)
    }

    /// Share of all cores taken by everything but the server, our backends and us.
    pub fn other_share(&self) -> f64 {
        self.share(self.other_s)
    }

    fn share(&self, s: f64) -> f64 {
        if self.capacity_s > 0.0 { s / self.capacity_s } else { 0.0 }
    }
}

fn clock_ticks_per_second() -> f64 {
    // /proc reports CPU time in USER_HZ ticks; 100 on every Linux build in practice.
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().filter(|t| *t > 0).unwrap_or(100) as f64
}

/// (`comm`, utime + stime) of one process.
fn process_ticks(stat_path: &str) -> Option<(String, u64)> {
    let stat = fs::read_to_string(stat_path).ok()?;
    // `comm` is in parentheses and may contain spaces; the fields after it are fixed.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat[open + 1..close].to_owned();
    let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After `comm`: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((comm, utime + stime))
}

/// CPU ticks (user + system, all its threads) process `pid` has used so far; 0 once it
/// is gone.
pub fn pid_ticks(pid: u32) -> u64 {
    process_ticks(&format!("/proc/{pid}/stat")).map(|(_, t)| t).unwrap_or(0)
}

/// CPU ticks of this process's children that have exited and been waited for
/// (`cutime` + `cstime`): a tool the bench ran to its end, such as pgbench.
pub fn reaped_children_ticks() -> u64 {
    let Ok(stat) = fs::read_to_string("/proc/self/stat") else { return 0 };
    let Some(close) = stat.rfind(')') else { return 0 };
    let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After `comm`: cutime and cstime are fields 16 and 17, at 13 and 14 here.
    let field = |i: usize| rest.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(13) + field(14)
}

/// The ids of this process's threads now (`/proc/self/task`).
pub fn own_threads() -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc/self/task") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

/// CPU ticks (user + system) these threads of this process have used so far.
fn thread_ticks(tids: &[u32]) -> u64 {
    tids.iter().filter_map(|t| process_ticks(&format!("/proc/self/task/{t}/stat")).map(|(_, t)| t)).sum()
}

/// CPU ticks of the PostgreSQL backends serving `database`: their process title
/// (`postgres: 15/main: user database host(port) state`) names it.
fn backend_ticks(database: &str) -> u64 {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0;
    };
    let needle = format!(" {database} ");
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
        .filter(|e| fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle)))
        .filter_map(|e| process_ticks(&format!("/proc/{}/stat", e.file_name().to_string_lossy())))
        .filter(|(comm, _)| comm == "postgres")
        .map(|(_, t)| t)
        .sum()
}

/// CPU ticks of the PostgreSQL cluster's work for `database`: the postmaster, its
/// auxiliary processes (the WAL writer, the checkpointer, …), the live backends of
/// `database`, and every process it has reaped (a client that disconnected: its
/// backend's CPU moves into the postmaster's children's counters once it exits). Live
/// backends of other databases are left out: another user of the same cluster (a test
/// suite) is not this run's cost. For spans in which clients connect and leave, as
/// pgbench's do, where [`backend_ticks`] would miss them.
pub fn cluster_ticks(database: &str) -> u64 {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0;
    };
    let mut procs: Vec<(u32, u32, u64, u64)> = Vec::new(); // pid, ppid, own ticks, reaped children's ticks
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        if &stat[open + 1..close] != "postgres" {
            continue;
        }
        let title = fs::read(format!("/proc/{pid}/cmdline")).map(|c| String::from_utf8_lossy(&c).into_owned());
        if title.is_ok_and(|t| backend_of_another(&t, database)) {
            continue;
        }
        let rest: Vec<u64> = stat[close + 1..].split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
        // After `comm` and the state: ppid is the 1st, utime/stime the 11th/12th,
        // cutime/cstime the 13th/14th.
        let field = |i: usize| rest.get(i).copied().unwrap_or(0);
        procs.push((pid, field(0) as u32, field(10) + field(11), field(12) + field(13)));
    }
    let pids: std::collections::HashSet<u32> = procs.iter().map(|p| p.0).collect();
    procs.iter().map(|&(_, ppid, own, reaped)| if pids.contains(&ppid) { own } else { own + reaped }).sum()
}

/// Whether a PostgreSQL process title (`postgres: 15/main: user database host(port)
/// state`) is a client backend of a database other than `database`; auxiliary
/// processes (`postgres: 15/main: checkpointer`) and the postmaster are not.
fn backend_of_another(title: &str, database: &str) -> bool {
    let title = title.replace('\0', " ");
    let Some((_, after)) = title.split_once(": ").and_then(|(_, r)| r.split_once(": ")) else { return false };
    let words: Vec<&str> = after.split_whitespace().collect();
    let is_client = words.get(2).is_some_and(|h| h.contains('(') || h.starts_with("[local]"));
    is_client && words.get(1).is_some_and(|db| *db != database)
}

/// (busy, total) ticks over all cores from the first line of `/proc/stat`.
fn machine_ticks() -> (u64, u64) {
    let stat = fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().next() else {
        return (0, 0);
    };
    let fields: Vec<u64> = line.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    (total.saturating_sub(idle), total)
}

/// A process's peak resident set (`VmHWM`) and current one (`VmRSS`), in KiB.
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

#[cfg(test)]
mod tests {
    use super::backend_of_another;

    #[test]
    fn a_backend_of_another_database_is_told_apart_from_ours_and_from_auxiliary_processes() {
        let ours = "postgres: 15/main: postgres sb_bench_1_throughput 127.0.0.1(5000) idle";
        let theirs = "postgres: 15/main: postgres sbt_22857_0 127.0.0.1(5001) SELECT";
        assert!(!backend_of_another(ours, "sb_bench_1_throughput"));
        assert!(backend_of_another(theirs, "sb_bench_1_throughput"));
        assert!(!backend_of_another("postgres: 15/main: checkpointer ", "sb_bench_1_throughput"));
        assert!(!backend_of_another("postgres: 15/main: background writer ", "x"));
        assert!(!backend_of_another("/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/postgresql/15/main", "x"));
    }
}
