//! The WAL a span wrote, split into full-page images and the rest: `pg_stat_wal`'s
//! `wal_fpi` counts the images (the cluster's cumulative statistics, which a backend
//! reports at most about once a second, so the count is approximate), and
//! `pg_waldump --stats` over the span's LSNs gives their bytes exactly, when the
//! cluster's data directory is readable here (a local cluster, the bench run as root or
//! as `postgres`). Otherwise the split is unavailable, never 0.
//!
//! A checkpoint during a span (one forced by `max_wal_size`, or a timed one) recycles
//! the segments before its redo point, and with them the span's start, before
//! `pg_waldump` can read it ("could not find file"). So the bench's session holds the
//! WAL with a temporary physical replication slot ([`hold`]), moved past each span once
//! it is split ([`release_until`]); being temporary, it goes with the session, and an
//! interrupted bench leaves nothing holding WAL.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::Command;

use crate::database::BenchDb;
use crate::progress;

/// Why the WAL could not be split, the first time it could not.
static UNREADABLE: OnceLock<String> = OnceLock::new();

/// Notes that a span's WAL could not be split (said on the terminal once).
pub fn unreadable(why: &str) {
    if UNREADABLE.set(why.to_owned()).is_ok() {
        progress(&format!("the WAL's full-page images are unavailable: {why}"));
    }
}

/// Why some span's WAL could not be split, if one could not.
pub fn unreadable_reason() -> Option<&'static str> {
    UNREADABLE.get().map(String::as_str)
}

/// Bytes of a span's WAL records, without and with their full-page images.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WalSplit {
    /// The records' own bytes (headers and data), without full-page images.
    pub record_bytes: u64,
    /// The full-page images' bytes.
    pub fpi_bytes: u64,
}

/// `X/Y`, as PostgreSQL writes an LSN.
pub fn lsn_text(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xffff_ffff)
}

/// The name of the slot that holds the WAL for `db`'s session (slot names are the
/// cluster's; the database's name carries the bench's pid).
fn slot_name(db: &BenchDb) -> String {
    format!("{}_wal", db.name())
}

/// Holds the WAL from here on for `db`'s session, and lets go of what came before (said
/// once when it cannot: the split may then find a span's start recycled). A span's
/// start calls it, before reading its position.
pub async fn hold_from_here(db: &BenchDb) {
    let slot = slot_name(db);
    let held = db
        .client()
        .query_opt(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = pg_backend_pid()",
            &[&slot],
        )
        .await;
    let done = match held {
        Ok(Some(_)) => match db.wal_position().await {
            Ok((now, _)) => return release_until(db, now).await,
            Err(e) => return unheld(&format!("cannot read the WAL's position: {e}")),
        },
        // Reserved at once (from the last checkpoint's redo point), dropped with the session.
        Ok(None) => db.client().query_one("SELECT pg_create_physical_replication_slot($1, true, true)", &[&slot]).await,
        Err(e) => Err(e),
    };
    if let Err(e) = done {
        unheld(&format!("cannot hold the WAL with a replication slot: {e}"));
    }
}

/// Lets the WAL before `lsn` go (a span split, or a new span starting).
pub async fn release_until(db: &BenchDb, lsn: u64) {
    let moved = db
        .client()
        .query_opt(
            "SELECT pg_replication_slot_advance(slot_name, $2::text::pg_lsn) FROM pg_replication_slots \
             WHERE slot_name = $1 AND active_pid = pg_backend_pid() AND restart_lsn < $2::text::pg_lsn",
            &[&slot_name(db), &lsn_text(lsn)],
        )
        .await;
    if let Err(e) = moved {
        unheld(&format!("cannot move the WAL's replication slot on: {e}"));
    }
}

/// Says once that the WAL is not held as it should be.
fn unheld(why: &str) {
    static SAID: OnceLock<()> = OnceLock::new();
    if SAID.set(()).is_ok() {
        progress(why);
    }
}

/// Where `pg_waldump` and the WAL are, or why they cannot be read.
async fn locate(db: &BenchDb) -> Result<(PathBuf, PathBuf, u32), String> {
    let row = db
        .client()
        .query_one(
            "SELECT current_setting('data_directory'), current_setting('server_version_num')::int / 10000, \
             (SELECT timeline_id FROM pg_control_checkpoint())",
            &[],
        )
        .await
        .map_err(|e| format!("cannot ask where the WAL is: {e}"))?;
    let (data_dir, major, timeline): (String, i32, i32) = (row.get(0), row.get(1), row.get(2));
    let wal_dir = Path::new(&data_dir).join("pg_wal");
    if std::fs::read_dir(&wal_dir).is_err() {
        return Err(format!("{} is not readable here", wal_dir.display()));
    }
    let packaged = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin/pg_waldump"));
    let bin = if packaged.is_file() { packaged } else { PathBuf::from("pg_waldump") };
    Ok((bin, wal_dir, u32::try_from(timeline).unwrap_or(1)))
}

/// The split of the WAL between `from` and `to` (byte positions), or why not.
pub async fn split(db: &BenchDb, from: u64, to: u64) -> Result<WalSplit, String> {
    if to <= from {
        return Ok(WalSplit::default());
    }
    let (bin, wal_dir, timeline) = locate(db).await?;
    // pg_waldump reads what is on disk: wait for the span's end to be flushed.
    for _ in 0..100 {
        let flushed = db.count("SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '0/0')::bigint").await?;
        if flushed >= to {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = Command::new(&bin)
        .args(["--stats", "-t", &timeline.to_string(), "-s", &lsn_text(from), "-e", &lsn_text(to), "-p"])
        .arg(&wal_dir)
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("pg_waldump failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    parse_total(&text).ok_or_else(|| "cannot read pg_waldump's totals".into())
}

/// Reads the `Total` line of `pg_waldump --stats`: records, record bytes, FPI bytes,
/// combined bytes (percentages in brackets between them).
fn parse_total(text: &str) -> Option<WalSplit> {
    let line = text.lines().find(|l| l.trim_start().starts_with("Total "))?;
    let numbers: Vec<u64> = line.split_whitespace().filter_map(|t| t.parse().ok()).collect();
    match numbers.as_slice() {
        [_records, record_bytes, fpi_bytes, _combined] => {
            Some(WalSplit { record_bytes: *record_bytes, fpi_bytes: *fpi_bytes })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_line_of_waldump_stats_is_read() {
        let text = "Heap                                        2016 ( 97.91)               119041 ( 96.62)      \
                    28776 ( 25.65)               147817 ( 62.79)\n                                        --------\n\
                    Total                                       2059                        123208 [52.34%]      \
                    112192 [47.66%]               235400 [100%]\n";
        assert_eq!(parse_total(text), Some(WalSplit { record_bytes: 123_208, fpi_bytes: 112_192 }));
    }

    #[test]
    fn output_without_a_total_is_refused() {
        assert_eq!(parse_total("WAL statistics between 0/1 and 0/2:\n"), None);
    }

    #[test]
    fn lsns_are_written_as_postgresql_does() {
        assert_eq!(lsn_text(0x1_6161_B4E8), "1/6161B4E8");
        assert_eq!(lsn_text(0x1616_B4E8), "0/1616B4E8");
    }
}
