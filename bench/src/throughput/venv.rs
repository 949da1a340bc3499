//! The bench's own Python (`target/bench-venv`): PGQueuer and its driver for the
//! reference, `requests` for the Python agents. Made on first use, like the Node
//! packages of Graphile Worker (graphile.rs).

use std::path::{Path, PathBuf};

use tokio::process::Command;

use crate::{BenchResult, progress};

/// What the venv holds, pinned so that runs compare.
const PACKAGES: [&str; 3] = ["pgqueuer==1.6.0", "asyncpg>=0.29", "requests==2.32.3"];

/// The venv's python, made (and the packages installed) if missing.
pub async fn python(venv: &Path) -> BenchResult<PathBuf> {
    let py = venv.join("bin/python");
    let ready = py.is_file()
        && Command::new(&py)
            .args(["-c", "import asyncpg, requests; from importlib.metadata import version as v; assert v('pgqueuer') == '1.6.0'"])
            .status()
            .await
            .is_ok_and(|s| s.success());
    if ready {
        return Ok(py);
    }
    progress(&format!("installing {} into {}", PACKAGES.join(", "), venv.display()));
    if !py.is_file() {
        let made = Command::new("python3").arg("-m").arg("venv").arg(venv).status().await;
        if !made.is_ok_and(|s| s.success()) {
            return Err("cannot make a Python venv (apt-get install -y python3-venv)".into());
        }
    }
    let installed = Command::new(venv.join("bin/pip")).args(["install", "-q"]).args(PACKAGES).status().await;
    if !installed.is_ok_and(|s| s.success()) {
        return Err(format!("cannot install {} into {}", PACKAGES.join(", "), venv.display()));
    }
    Ok(py)
}
