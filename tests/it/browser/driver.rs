//! Headless Chromium behind its own chromedriver: started on a free loopback port for
//! one test, with a fresh profile, and stopped (with every browser process it started)
//! when dropped.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::harness::wait::wait_until_every;

/// Where the Debian packages `chromium` and `chromium-driver` put the browser and its
/// WebDriver; `SWITCHBOARD_CHROMIUM` and `SWITCHBOARD_CHROMEDRIVER` override them.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

static PROFILES: AtomicU32 = AtomicU32::new(0);

fn binary(var: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| default.into());
    assert!(
        path.is_file(),
        "the browser test needs headless Chromium and chromedriver, and {} is missing: install the Debian \
         packages `chromium` and `chromium-driver` (scripts/test installs them), or point {var} at the binary",
        path.display()
    );
    path
}

/// The Chromium binary.
pub fn chromium() -> PathBuf {
    binary("SWITCHBOARD_CHROMIUM", CHROMIUM)
}

/// Where screenshots (and the chromedriver log) are kept: `<target dir>/board-screenshots`,
/// which CI keeps as an artifact.
pub fn screenshot_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("board-screenshots");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// The command-line flags Chromium needs here: headless, no sandbox (containers run
/// as root), and nothing that talks to the network behind the test's back.
pub fn chromium_args(profile: &Path, (width, height): (u32, u32)) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ]
    .into_iter()
    .map(String::from)
    .chain([format!("--user-data-dir={}", profile.display()), format!("--window-size={width},{height}")])
    .collect()
}

/// A running chromedriver and the profile directory its browser uses.
pub struct Chromedriver {
    child: Child,
    /// The WebDriver URL (`http://127.0.0.1:{port}`).
    pub url: String,
    /// A fresh, empty Chromium profile, removed on drop.
    pub profile: PathBuf,
}

impl Chromedriver {
    /// Starts chromedriver on a free loopback port and waits until it listens.
    pub async fn start() -> Chromedriver {
        let driver = binary("SWITCHBOARD_CHROMEDRIVER", CHROMEDRIVER);
        let port = free_port();
        let log = screenshot_dir().join("chromedriver.log");
        let out = std::fs::File::create(&log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
        let err = out.try_clone().expect("clone log handle");
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own process group: dropping it stops chromedriver and every browser
            // process it started, and nothing else.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", driver.display()));
        let profile = std::env::temp_dir().join(format!(
            "sb-chromium-{}-{}",
            std::process::id(),
            PROFILES.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).unwrap_or_else(|e| panic!("create {}: {e}", profile.display()));
        let mut driver = Chromedriver { child, url: format!("http://127.0.0.1:{port}"), profile };
        driver.wait_listening(port, &log).await;
        driver
    }

    async fn wait_listening(&mut self, port: u16, log: &Path) {
        let what = format!("chromedriver to listen on {port} (see {})", log.display());
        wait_until_every(what, Duration::from_secs(15), Duration::from_millis(25), async || {
            if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("chromedriver exited ({status}) before listening; see {}", log.display());
            }
            Err("connection refused".into())
        })
        .await;
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let group = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}
