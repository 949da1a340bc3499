//! Runs the schemathesis CLI against a live server and keeps its report.

use std::path::PathBuf;
use std::time::Duration;

/// The pinned schemathesis `scripts/test` installs (into a virtualenv under target/),
/// or the one `SWITCHBOARD_SCHEMATHESIS` names. Missing, the test fails: it never skips.
pub fn schemathesis() -> PathBuf {
    let path = std::env::var_os("SWITCHBOARD_SCHEMATHESIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/schemathesis-venv/bin/schemathesis"));
    assert!(
        path.is_file(),
        "schemathesis is not installed at {}: run scripts/test, which installs the pinned version \
         into target/schemathesis-venv (or set SWITCHBOARD_SCHEMATHESIS)",
        path.display()
    );
    path
}

/// Test cases per operation and phase: the two runs take about a minute each on two cores.
/// `SWITCHBOARD_CONFORMANCE_EXAMPLES` asks for more (a longer hunt for what a random seed
/// of the default run might find only now and then).
const EXAMPLES: &str = "25";

fn examples() -> String {
    std::env::var("SWITCHBOARD_CONFORMANCE_EXAMPLES").unwrap_or_else(|_| EXAMPLES.to_owned())
}

/// Every check schemathesis has, less one the document cannot promise:
/// - `positive_data_acceptance`: the document gives types; the server's ranges and
///   syntax rules (limits, lease lengths, queue and slug names, URLs, owners) are in
///   the descriptions, and a value outside them is refused with a documented 422.
///
/// (`unsupported_method` is checked: a method a path does not have answers 405 with an
/// `Allow` header listing the ones it has.)
const EXCLUDED_CHECKS: &str = "positive_data_acceptance";

/// What one run said.
pub struct Run {
    /// Exit status 0.
    pub passed: bool,
    /// Everything schemathesis printed.
    pub report: String,
}

impl Run {
    /// The report's failures section (each failing operation, what it answered, the
    /// request to replay it with), at most 120 lines.
    pub fn failures(&self) -> String {
        let lines: Vec<&str> = self.report.lines().collect();
        let start = lines.iter().position(|l| l.contains("FAILURES")).unwrap_or(0);
        let end = lines.iter().rposition(|l| l.contains("SUMMARY")).filter(|&e| e > start).unwrap_or(lines.len());
        lines[start..end].iter().take(120).copied().collect::<Vec<_>>().join("\n")
    }

    /// The closing section of the report (failures counted, the seed to replay with).
    pub fn summary(&self) -> String {
        let lines: Vec<&str> = self.report.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Runs every phase (examples, coverage, fuzzing, stateful) over every operation of
/// `{base}/api/openapi.json` with `token` as the bearer.
pub async fn run(schemathesis: &PathBuf, base: &str, token: &str) -> Run {
    // Its working files (the example database, reports) stay under target/.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/schemathesis-run");
    std::fs::create_dir_all(&dir).expect("create target/schemathesis-run");
    let mut cmd = tokio::process::Command::new(schemathesis);
    cmd.current_dir(&dir)
        .arg("run")
        .arg(format!("{base}/api/openapi.json"))
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all", "--exclude-checks", EXCLUDED_CHECKS])
        .args(["--max-examples", &examples()])
        // One worker: Python 3.11's ast.parse fails ("AST constructor recursion depth
        // mismatch") when hypothesis describes strategies from several threads at once.
        .args(["--workers", "1"])
        .args(["--request-timeout", "20", "--generation-database", "none", "--no-color"])
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(600), cmd.output())
        .await
        .expect("schemathesis finished within 10 minutes")
        .expect("schemathesis runs");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Run { passed: out.status.success(), report }
}
