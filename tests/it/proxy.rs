//! Behind a reverse proxy (`SWITCHBOARD_TRUSTED_PROXIES`): the Board's per-address
//! sign-in limit and the access log see the client a trusted proxy names in
//! `X-Forwarded-For`, and nothing changes for a peer the setting does not name.
//!
//! Every request comes from loopback; a client bound to `127.0.0.2` is a second peer
//! that a setting naming `127.0.0.1/32` does not trust.

use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use awc::http::StatusCode;
use switchboard::board::rate_limit::PER_ADDRESS_PER_MINUTE;
use switchboard::domain::trusted_proxies::TrustedProxies;

use crate::board::{PASSWORD, human};
use crate::harness::TestApp;
use crate::harness::TestDb;
use crate::sinks::logs::Served;

/// The peer a setting of `127.0.0.1/32` trusts, and one it does not.
const PROXY: &str = "127.0.0.1";
const STRANGER: &str = "127.0.0.2";

/// A browser at `base` connecting from `from`, holding one sign-in form (its
/// double-submit cookie and token serve every attempt).
struct Door {
    client: awc::Client,
    base: String,
    cookie: String,
    csrf: String,
}

impl Door {
    async fn open(base: &str, from: &str) -> Door {
        let from: IpAddr = from.parse().unwrap();
        let client = awc::Client::builder()
            .connector(awc::Connector::new().local_address(from))
            .disable_redirects()
            .timeout(Duration::from_secs(30))
            .finish();
        let (cookie, csrf) = testkit::board::login_form(&client, base).await.unwrap();
        Door { client, base: base.to_owned(), cookie, csrf }
    }

    /// One sign-in attempt carrying `forwarded_for`; its status.
    async fn attempt(&self, forwarded_for: Option<&str>, email: &str, password: &str) -> StatusCode {
        let mut req = self.client.post(format!("{}/login", self.base)).insert_header(("cookie", self.cookie.as_str()));
        if let Some(xff) = forwarded_for {
            req = req.insert_header(("x-forwarded-for", xff));
        }
        let form = [("email", email), ("password", password), ("csrf_token", self.csrf.as_str())];
        req.send_form(&form).await.expect("sign-in attempt").status()
    }

    /// Guesses, each for another unknown email (so only the per-address limit can
    /// refuse), until one is refused 429; how many were answered before it. A bucket
    /// refills one attempt every two seconds, so a slow run may take a few more than
    /// the limit; past twice the limit something other than the limit is answering.
    async fn lock_out(&self, forwarded_for: impl Fn(usize) -> String) -> usize {
        for i in 0..2 * PER_ADDRESS_PER_MINUTE as usize {
            let status = self.attempt(Some(&forwarded_for(i)), &format!("guess{i}@example.com"), "a guess").await;
            match status {
                StatusCode::TOO_MANY_REQUESTS => return i,
                StatusCode::UNAUTHORIZED => {}
                other => panic!("guess {i} answered {other}"),
            }
        }
        panic!("{} guesses from one address were never refused", 2 * PER_ADDRESS_PER_MINUTE)
    }

    /// Whether any of three attempts right now is refused 429. A bucket just emptied
    /// refills one attempt every two seconds, so three in a row meet its refusal unless
    /// the machine stalls for four seconds; a fresh bucket refuses none of them.
    async fn refused_within_three(&self, forwarded_for: &str, email: &str) -> bool {
        let mut refused = false;
        for _ in 0..3 {
            refused |=
                self.attempt(Some(forwarded_for), email, "not the password").await == StatusCode::TOO_MANY_REQUESTS;
        }
        refused
    }
}

async fn behind_proxy_at(proxies: &str) -> TestApp {
    let proxies = TrustedProxies::parse(proxies).unwrap();
    TestApp::spawn_with(|s| s.trusted_proxies = proxies).await
}

#[actix_web::test]
async fn behind_a_trusted_proxy_two_users_get_separate_sign_in_limits() {
    let app = behind_proxy_at("127.0.0.1/32").await;
    human(&app, "bob@example.com", "Bob").await;
    let proxy = Door::open(&app.base, PROXY).await;
    // The client wrote 6.6.6.6 itself; the proxy appended the address it came from.
    let answered = proxy.lock_out(|_| "6.6.6.6, 198.51.100.1".to_owned()).await;
    assert!(answered >= PER_ADDRESS_PER_MINUTE as usize, "locked out after {answered}, before the limit");
    assert_eq!(
        proxy.attempt(Some("6.6.6.6, 198.51.100.2"), "bob@example.com", PASSWORD).await,
        StatusCode::SEE_OTHER,
        "another client through the same proxy has a bucket of its own and signs in"
    );
    assert!(proxy.refused_within_three("198.51.100.1", "carol@example.com").await, "the first client is still out");
}

#[actix_web::test]
async fn without_the_setting_forwarded_for_is_ignored_and_clients_behind_one_proxy_share_a_limit() {
    let app = TestApp::spawn().await;
    let proxy = Door::open(&app.base, PROXY).await;
    // Even a new address on every guess: the peer is the client.
    proxy.lock_out(|i| format!("198.51.100.{}", i + 1)).await;
    assert!(proxy.refused_within_three("203.0.113.9", "bob@example.com").await, "the header was believed");
}

#[actix_web::test]
async fn a_forged_forwarded_for_from_a_peer_the_setting_does_not_name_changes_nothing() {
    let app = behind_proxy_at("127.0.0.1/32").await;
    let stranger = Door::open(&app.base, STRANGER).await;
    stranger.lock_out(|i| format!("198.51.100.{}", i + 1)).await;
    assert!(stranger.refused_within_three("203.0.113.9", "bob@example.com").await, "the forgery was believed");
    // The trusted proxy's clients are untouched by the stranger's lockout.
    human(&app, "bob@example.com", "Bob").await;
    let proxy = Door::open(&app.base, PROXY).await;
    assert_eq!(proxy.attempt(Some("203.0.113.50"), "bob@example.com", PASSWORD).await, StatusCode::SEE_OTHER);
}

#[actix_web::test]
async fn the_access_log_names_the_client_behind_a_trusted_proxy_and_the_peer_otherwise() {
    let db = TestDb::new().await;
    let served = Served::start_with(&db, &[("SWITCHBOARD_TRUSTED_PROXIES", "127.0.0.1/32")]);
    for (from, xff) in [(PROXY, "6.6.6.6, 198.51.100.7"), (STRANGER, "198.51.100.8")] {
        let client =
            awc::Client::builder().connector(awc::Connector::new().local_address(from.parse().unwrap())).finish();
        let resp = client.get(format!("{}/healthz", served.base)).insert_header(("x-forwarded-for", xff)).send().await;
        assert!(resp.expect("healthz").status().is_success());
    }
    let logs = served.stop();
    let lines: Vec<&str> = logs.lines().filter(|l| l.contains("GET /healthz 200 ")).collect();
    assert_eq!(lines.len(), 2, "one access log line a request:\n{logs}");
    assert!(lines.iter().any(|l| l.contains("client=198.51.100.7")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("client=127.0.0.2")), "{lines:?}");
    for forged in ["6.6.6.6", "198.51.100.8"] {
        assert!(!lines.iter().any(|l| l.contains(forged)), "{forged} was believed: {lines:?}");
    }
}

#[actix_web::test]
async fn a_bad_trusted_proxies_value_refuses_to_start_naming_the_setting_and_the_entry() {
    let db = TestDb::new().await;
    for (value, entry) in
        [("127.0.0.1, proxy.internal", "proxy.internal"), ("10.1.2.3/8", "10.1.2.3/8"), ("0.0.0.0/0", "0.0.0.0/0")]
    {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
            cmd.env_remove(k);
        }
        let child = cmd
            .env("SWITCHBOARD_DATABASE_URL", &db.url)
            .env("SWITCHBOARD_TRUSTED_PROXIES", value)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        // A server that accepted the value would run until stopped.
        let Ok(out) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            panic!("SWITCHBOARD_TRUSTED_PROXIES={value:?} was accepted: the server kept running");
        };
        let out = out.expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{value:?} was accepted");
        assert!(err.contains("SWITCHBOARD_TRUSTED_PROXIES") && err.contains(&format!("{entry:?}")), "{value}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "it said it was running");
    }
}
