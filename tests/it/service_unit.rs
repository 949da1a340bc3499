//! `serve` under a service manager, as `deploy/systemd/switchboard.service` runs it: the
//! database URL handed over as a file (`SWITCHBOARD_DATABASE_URL_FILE`, what
//! `LoadCredential=` gives), and `READY=1` on `NOTIFY_SOCKET` (`Type=notify`) only once
//! the instance answers `/readyz` 200, so `systemctl start` returns on a serving instance.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::harness::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// A cold debug binary migrating on a busy machine.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// A directory of its own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        let dir = std::env::temp_dir().join(format!("sb-unit-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The process, stopped with SIGTERM when dropped.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.0.wait();
    }
}

#[actix_web::test]
async fn serve_reads_its_database_url_from_a_file_and_says_ready_only_once_readyz_answers_200() {
    let db = TestDb::new().await;
    let dir = Dir::new();
    // What LoadCredential= leaves: a file holding the URL, with a final newline.
    let url_file = dir.0.join("database-url");
    std::fs::write(&url_file, format!("{}\n", db.url)).unwrap();
    let socket_path = dir.0.join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(READY_WITHIN)).unwrap();

    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_") || k == "NOTIFY_SOCKET") {
        cmd.env_remove(k);
    }
    let child = cmd
        .env("SWITCHBOARD_DATABASE_URL_FILE", &url_file)
        .env("NOTIFY_SOCKET", &socket_path)
        .env("SWITCHBOARD_LOG", "warn")
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut serve = Stopped(child);
    let mut stdout = BufReader::new(serve.0.stdout.take().unwrap()).lines();

    // The service manager's side: the first datagram this process sends.
    let said = actix_web::rt::task::spawn_blocking(move || {
        let mut buf = [0u8; 4096];
        socket.recv(&mut buf).map(|n| String::from_utf8_lossy(&buf[..n]).into_owned())
    })
    .await
    .unwrap()
    .expect("no notification from serve within the deadline");
    assert!(said.lines().any(|l| l == "READY=1"), "{said:?}");

    // Ready means ready, asked at once: the database was reached through the file's URL,
    // and the application (not the start-up server, which answers /readyz 503) serves.
    let addr = said.lines().find_map(|l| l.strip_prefix("STATUS=serving on ")).unwrap_or_else(|| panic!("{said:?}"));
    let readyz = awc::Client::default().get(format!("http://{addr}/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 200, "READY=1 came before /readyz answered 200");
    let line = stdout.next().unwrap().unwrap();
    assert_eq!(line, format!("Switchboard is running at http://{addr}"));
    // Keep stdout drained while the process stops.
    std::thread::spawn(move || stdout.for_each(drop));
}

#[test]
fn a_setting_file_that_cannot_be_read_stops_serve_naming_the_variable_and_the_file() {
    let dir = Dir::new();
    let missing = dir.0.join("no-such-credential");
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    let out = cmd
        .env("SWITCHBOARD_DATABASE_URL_FILE", &missing)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SWITCHBOARD_DATABASE_URL_FILE: cannot read"), "{stderr}");
    assert!(stderr.contains(missing.to_str().unwrap()), "{stderr}");
}
