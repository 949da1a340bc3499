//! The `switchboard` binary: admin commands with `--json`, bad configuration, and the
//! embedded database default.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// Runs the binary with only the given SWITCHBOARD_* variables set.
fn run(env: &[(&str, &str)], args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied()).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn switchboard");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_line(stdout: &str) -> Value {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout:?}");
    serde_json::from_str(lines[0]).expect("one JSON object")
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

#[actix_web::test]
async fn admin_commands_print_exactly_one_json_object_and_revocation_counts_dead_letters() {
    let db = TestDb::new().await;
    let env = [("SWITCHBOARD_DATABASE_URL", db.url.as_str())];
    let (code, out, err) = run(
        &env,
        &["admin", "create-human", "--email", "ada@example.com", "--name", "Ada", "--password-stdin", "--json"],
        Some("a long enough password\n"),
    );
    assert_eq!(code, 0, "{err}");
    let human = json_line(&out);
    assert_eq!(keys(&human), vec!["email", "id", "token"]);
    assert!(human["token"].as_str().unwrap().starts_with("sbo_"));
    assert_eq!(db.count("SELECT count(*) FROM humans WHERE password_hash LIKE '$argon2id$%'").await, 1);
    assert!(!err.contains(human["token"].as_str().unwrap()), "the token never reaches the log");

    let (code, out, _) =
        run(&env, &["admin", "create-team", "--name", "ops", "--admin", "ada@example.com", "--json"], None);
    assert_eq!(code, 0);
    let team = json_line(&out);
    assert_eq!(keys(&team), vec!["id", "name"]);
    assert_eq!(team["name"], "ops");

    let (code, out, err) = run(
        &env,
        &[
            "admin",
            "vend-endpoint",
            "--owner",
            "team:ops",
            "--slug",
            "builder",
            "--grant",
            "claim_next",
            "--grant",
            "create_todo",
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let ep = json_line(&out);
    assert_eq!(keys(&ep), vec!["grants", "id", "slug", "token"]);
    assert_eq!(ep["grants"], json!(["claim_next", "create_todo"]));
    assert!(ep["token"].as_str().unwrap().starts_with("sbk_"));

    // Put live work on it, then revoke from the CLI.
    let pool_store = db.store(switchboard::store::signals::Emitter::none());
    let endpoint = pool_store.endpoint_by_slug("builder").await.unwrap();
    for title in ["a", "b", "c"] {
        pool_store.create_todo(switchboard::store::todos::NewTodo::new(endpoint.id, "q", title)).await.unwrap();
    }
    let (code, out, _) = run(&env, &["admin", "revoke-endpoint", "--slug", "builder", "--json"], None);
    assert_eq!(code, 0);
    let revoked = json_line(&out);
    assert_eq!(revoked, json!({"id": ep["id"], "revoked": true, "dead_lettered": 3}));

    // Errors: non-zero, one JSON error object with --json, a clear line on stderr.
    let (code, out, err) =
        run(&env, &["admin", "vend-endpoint", "--owner", "nobody@example.com", "--slug", "x", "--json"], None);
    assert_ne!(code, 0);
    assert!(json_line(&out)["error"]["message"].as_str().unwrap().contains("owner"));
    assert!(err.contains("owner"), "{err}");
    let (code, _, err) =
        run(&env, &["admin", "vend-endpoint", "--owner", "team:ops", "--slug", "y", "--grant", "fly"], None);
    assert_ne!(code, 0);
    assert!(err.contains("unknown grant"), "{err}");
}

#[actix_web::test]
async fn bad_configuration_stops_start_up_with_a_message_naming_the_setting() {
    let cases = [
        ("SWITCHBOARD_DATABASE_URL", "postgres://u@h:notaport/db"),
        ("SWITCHBOARD_SECRET_ENCRYPTION_KEY", "dG9vIHNob3J0"),
        ("SWITCHBOARD_ADDR", "localhost"),
        ("SWITCHBOARD_BASE_URL", "not a url"),
        ("SWITCHBOARD_METRICS_TOKEN", "short"),
        ("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", "10.0.0.0/99"),
        ("SWITCHBOARD_LOG", "=[[["),
    ];
    for (name, value) in cases {
        let (code, _, err) = run(&[(name, value)], &["migrate"], None);
        assert_ne!(code, 0, "{name}={value} was accepted");
        assert!(err.contains(name), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (code, _, err) = run(&[("SWITCHBOARD_LOG_FORMAT", "xml")], &["migrate"], None);
    assert_ne!(code, 0);
    assert!(err.contains("log-format") && err.contains("xml"), "{err}");
}

#[actix_web::test]
async fn without_server_binaries_the_embedded_default_names_the_package_and_the_variable() {
    let empty = tempdir("sb-nobin");
    let data = tempdir("sb-data");
    // `serve`: the one command that creates the embedded database.
    let (code, _, err) = run(
        &[
            ("SWITCHBOARD_PG_BIN_DIR", empty.to_str().unwrap()),
            ("SWITCHBOARD_DATA_DIR", data.to_str().unwrap()),
            ("SWITCHBOARD_LOG", "warn"),
        ],
        &["serve", "--addr", "127.0.0.1:0"],
        None,
    );
    assert_ne!(code, 0);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].contains("postgresql") && lines[0].contains("SWITCHBOARD_DATABASE_URL"), "{err}");
}

fn tempdir(prefix: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> String {
    switchboard::domain::ids::TodoId::new().to_string()[3..11].to_owned()
}

#[actix_web::test]
async fn serve_brings_up_the_embedded_database_prints_the_demo_and_stops_it_on_shutdown() {
    let data = tempdir("sb-embedded");
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir", data.to_str().unwrap()])
        .env_remove("SWITCHBOARD_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let mut base = None;
    let mut token = None;
    while base.is_none() || token.is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "serve did not start");
        let line = lines.next().expect("stdout open").unwrap();
        if let Some(url) = line.strip_prefix("Switchboard is running at ") {
            base = Some(url.trim().to_owned());
        }
        if let Some(t) = line.trim().strip_prefix("agent token ") {
            token = Some(t.trim().to_owned());
        }
    }
    let (base, token) = (base.unwrap(), token.unwrap());
    let client = awc::Client::default();
    let resp = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut resp = client
        .post(format!("{base}/api/v1/agent/todos"))
        .insert_header(("Authorization", format!("Bearer {token}")))
        .send_json(&json!({"queue": "inbox", "title": "hello"}))
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.body().await);
    let pid_file = data.join("pgdata").join("postmaster.pid");
    assert!(pid_file.exists(), "the embedded cluster runs under the data dir");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(!pid_file.exists(), "the embedded cluster stopped with the server");
    let _ = std::fs::remove_dir_all(&data);
}

#[actix_web::test]
async fn team_members_and_operator_tokens_are_managed_from_the_cli() {
    let app = crate::harness::TestApp::spawn().await;
    let env = [("SWITCHBOARD_DATABASE_URL", app.db.url.as_str())];
    let admin = app.owner("admin@example.com").await;
    let member = app.owner("member@example.com").await;
    assert_eq!(run(&env, &["admin", "create-team", "--name", "ops", "--admin", "admin@example.com"], None).0, 0);
    let (code, out, err) =
        run(&env, &["admin", "add-team-member", "--team", "ops", "--email", "member@example.com", "--json"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_line(&out)["role"], "member");
    let (s, v) = app.post("/api/v1/endpoints", &admin.token, json!({"slug": "team-ep", "owner": "team:ops"})).await;
    assert_eq!(s, 201, "{v}");
    let (_, list) = app.get("/api/v1/endpoints", &member.token).await;
    assert_eq!(list["endpoints"][0]["slug"], "team-ep", "a member sees the team's endpoints");

    let (code, out, _) = run(&env, &["admin", "mint-operator-token", "--email", "member@example.com", "--json"], None);
    assert_eq!(code, 0);
    let minted = json_line(&out)["token"].as_str().unwrap().to_owned();
    assert_eq!(app.get("/api/v1/endpoints", &minted).await.0, 200);
    let (code, out, _) =
        run(&env, &["admin", "revoke-operator-tokens", "--email", "member@example.com", "--json"], None);
    assert_eq!(code, 0);
    assert_eq!(json_line(&out)["revoked"], 2);
    assert_eq!(app.get("/api/v1/endpoints", &minted).await.0, 401);
    assert_eq!(app.get("/api/v1/endpoints", &member.token).await.0, 401);
    let (code, out, _) =
        run(&env, &["admin", "add-team-member", "--team", "nope", "--email", "x@example.com", "--json"], None);
    assert_ne!(code, 0);
    assert_eq!(json_line(&out)["error"]["code"], "invalid_argument");
}

#[actix_web::test]
async fn set_password_lets_a_human_sign_in_and_ends_their_board_sessions() {
    use crate::board::{PASSWORD, get, sign_in, submit_login};
    let app = crate::harness::TestApp::spawn().await;
    let env = [("SWITCHBOARD_DATABASE_URL", app.db.url.as_str())];
    let (code, _, err) =
        run(&env, &["admin", "create-human", "--email", "ada@example.com", "--name", "Ada", "--json"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(submit_login(&app, "ada@example.com", PASSWORD).await.status, 401, "no password yet");

    let set = |password: &str| {
        run(
            &env,
            &["admin", "set-password", "--email", "ada@example.com", "--password-stdin", "--json"],
            Some(password),
        )
    };
    let (code, out, err) = set(&format!("{PASSWORD}\n"));
    assert_eq!(code, 0, "{err}");
    let answer = json_line(&out);
    assert_eq!(keys(&answer), vec!["email", "id", "sessions_ended"]);
    assert_eq!(answer["sessions_ended"], 0);
    assert!(!err.contains(PASSWORD) && !out.contains(PASSWORD), "the password is never printed");
    let session = sign_in(&app, "ada@example.com").await;

    let (code, out, _) = set("a different long password\n");
    assert_eq!(code, 0);
    assert_eq!(json_line(&out)["sessions_ended"], 1);
    assert_eq!(get(&app, "/todos", Some(&session.cookie)).await.status, 303, "a reset ends the old sessions");
    assert_eq!(submit_login(&app, "ada@example.com", PASSWORD).await.status, 401, "the old password is gone");
    assert_eq!(submit_login(&app, "ada@example.com", "a different long password").await.status, 303);

    let (code, out, _) = set("short\n");
    assert_ne!(code, 0);
    assert_eq!(json_line(&out)["error"]["code"], "invalid_argument");
    let (code, out, _) = run(&env, &["admin", "set-password", "--email", "ada@example.com", "--json"], None);
    assert_ne!(code, 0, "a password never comes from the command line");
    assert_eq!(json_line(&out)["error"]["code"], "invalid_argument");
    let (code, out, _) = run(
        &env,
        &["admin", "set-password", "--email", "nobody@example.com", "--password-stdin", "--json"],
        Some("long enough password\n"),
    );
    assert_ne!(code, 0);
    assert_eq!(json_line(&out)["error"]["code"], "invalid_argument");
}

#[actix_web::test]
async fn a_demo_reset_reseeds_with_fresh_tokens_and_board_password_and_replaces_a_revoked_demo_endpoint() {
    use switchboard::cli::serve::seed_demo;
    use switchboard::domain::passwords::verify_password;
    let app = crate::harness::TestApp::spawn().await;
    let first = seed_demo(&app.store, None, true).await.unwrap();
    let second = seed_demo(&app.store, None, true).await.unwrap();
    assert_eq!((first.endpoint_slug.as_str(), second.endpoint_slug.as_str()), ("demo", "demo"));
    assert_eq!(app.get("/api/v1/agent/todos", &first.endpoint_token).await.0, 401, "rotated");
    assert_eq!(app.get("/api/v1/endpoints", &first.operator_token).await.0, 401, "earlier demo tokens are revoked");
    let (_, list) = app.get("/api/v1/endpoints", &second.operator_token).await;
    let id = list["endpoints"][0]["id"].as_str().unwrap().to_owned();
    app.post(&format!("/api/v1/endpoints/{id}/revoke"), &second.operator_token, json!({})).await;
    let third = seed_demo(&app.store, None, true).await.unwrap();
    assert_eq!(third.endpoint_slug, "demo-2");
    let facts = app.store.login_facts("demo@switchboard.local").await.unwrap().unwrap();
    let hash = facts.password_hash.as_deref();
    assert!(verify_password(hash, &third.board_password), "the printed Board password signs in");
    assert!(!verify_password(hash, &second.board_password), "an earlier one does not");
    assert_eq!(app.get("/api/v1/agent/todos", &third.endpoint_token).await.0, 200);
}

/// The hex HMAC-SHA256 of `body` under `secret` (GitHub prefixes it with `sha256=`).
fn hmac_hex(secret: &str, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Posts a delivery to an ingest URL as printed by the CLI.
async fn deliver(app: &crate::harness::TestApp, url: &str, headers: &[(&str, String)], body: &[u8]) -> (u16, Value) {
    let mut req = app.client.post(url).insert_header(("content-type", "application/json"));
    for (k, v) in headers {
        req = req.insert_header((*k, v.as_str()));
    }
    let mut resp = req.send_body(body.to_vec()).await.unwrap();
    let bytes = resp.body().await.unwrap();
    (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[actix_web::test]
async fn webhooks_created_from_the_cli_take_signed_deliveries_and_list_like_the_api() {
    let app = crate::harness::TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(switchboard::config::SecretKey([5; 32]));
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let key = hex::encode([5u8; 32]);
    let env = [
        ("SWITCHBOARD_DATABASE_URL", app.db.url.as_str()),
        ("SWITCHBOARD_SECRET_ENCRYPTION_KEY", key.as_str()),
        ("SWITCHBOARD_BASE_URL", app.base.as_str()),
    ];
    let create = |extra: &[&str], stdin: Option<&str>| {
        let mut args = vec!["admin", "create-webhook", "--json"];
        if !extra.contains(&"--endpoint") {
            args.extend(["--endpoint", "worker"]);
        }
        args.extend_from_slice(extra);
        run(&env, &args, stdin)
    };
    const CREATED_KEYS: [&str; 4] = ["id", "ingest_token", "ingest_url", "signing_secret"];

    // A GitHub webhook trusting one sender: the printed secret signs a real delivery.
    let (code, out, err) = create(&["--source", "github", "--queue", "builds", "--trusted-login", "octo"], None);
    assert_eq!(code, 0, "{err}");
    let github = json_line(&out);
    assert_eq!(keys(&github), CREATED_KEYS);
    let token = github["ingest_token"].as_str().unwrap();
    let url = github["ingest_url"].as_str().unwrap();
    assert_eq!(url, format!("{}/webhooks/w/{token}", app.base));
    let secret = github["signing_secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert!(!err.contains(token) && !err.contains(secret), "credentials never reach the log: {err}");
    let body = br#"{"ref":"refs/heads/main","sender":{"login":"octo"}}"#;
    let headers = [
        ("X-GitHub-Event", "push".to_owned()),
        ("X-GitHub-Delivery", "cli-1".to_owned()),
        ("X-Hub-Signature-256", format!("sha256={}", hmac_hex(secret, body))),
    ];
    let (s, answer) = deliver(&app, url, &headers, body).await;
    assert_eq!((s, answer["disposition"].as_str()), (202, Some("routed")), "{answer}");
    let c = app.claim_next(&ep).await;
    assert_eq!((c["todo"]["queue"].as_str(), c["todo"]["title"].as_str()), (Some("builds"), Some("github push")));
    assert_eq!(app.db.count("SELECT count(*) FROM events WHERE verified AND trust_mode = 'signed'").await, 1);
    let forged = [("X-Hub-Signature-256", format!("sha256={}", hmac_hex("not the secret", body)))];
    assert_eq!(deliver(&app, url, &forged, body).await.0, 401);

    // A provider-supplied secret read from standard input signs Gitea deliveries.
    let gitea_flags =
        ["--source", "gitea", "--queue", "forge", "--allow-all-actors", "--max-attempts", "3", "--secret-stdin"];
    let (code, out, err) = create(&gitea_flags, Some("gitea-shared-secret\n"));
    assert_eq!(code, 0, "{err}");
    let gitea = json_line(&out);
    assert_eq!(gitea["signing_secret"], "gitea-shared-secret");
    let body = br#"{"sender":{"login":"anyone"}}"#;
    let signature = [("X-Gitea-Signature", hmac_hex("gitea-shared-secret", body))];
    let (s, answer) = deliver(&app, gitea["ingest_url"].as_str().unwrap(), &signature, body).await;
    assert_eq!((s, answer["disposition"].as_str()), (202, Some("routed")), "{answer}");
    assert_eq!(app.claim_next(&ep).await["todo"]["max_attempts"], 3);

    // Generic and unverified webhooks have no signing secret.
    let secretless: [&[&str]; 2] =
        [&["--source", "generic", "--queue", "inbox"], &["--source", "stripe", "--queue", "billing", "--unverified"]];
    for extra in secretless {
        let (code, out, err) = create(extra, None);
        assert_eq!(code, 0, "{extra:?}: {err}");
        let w = json_line(&out);
        assert_eq!(keys(&w), CREATED_KEYS);
        assert!(w["signing_secret"].is_null(), "{extra:?}: {w}");
    }

    // The listing is the API's view, entry for entry, and shows no credential.
    let (code, out, err) = run(&env, &["admin", "list-webhooks", "--json"], None);
    assert_eq!(code, 0, "{err}");
    let listed = json_line(&out);
    assert_eq!(keys(&listed), vec!["webhooks"]);
    assert_eq!(listed["webhooks"].as_array().unwrap().len(), 4);
    let (s, api) = app.get("/api/v1/webhooks", &owner.token).await;
    assert_eq!(s, 200);
    assert_eq!(listed, api, "the CLI lists exactly what GET /api/v1/webhooks answers");
    assert_eq!(listed["webhooks"][3]["id"], github["id"], "newest first");
    assert_eq!(listed["webhooks"][3]["refused_deliveries"], 1);
    assert!(!out.contains(token) && !out.contains(secret), "a listing never shows credentials");

    // Refusals: one JSON error object, a line on stderr, and nothing stored.
    let before = app.db.count("SELECT count(*) FROM webhooks").await;
    let refusals: [(&[&str], Option<&str>, &str); 7] = [
        (&["--source", "github", "--queue", "q", "--endpoint", "nope"], None, "not_found"),
        (&["--source", "github", "--queue", "Bad Queue"], None, "invalid_argument"),
        (&["--source", "github", "--queue", "quarantine"], None, "invalid_argument"),
        (&["--source", "github", "--queue", "q", "--max-attempts", "101"], None, "invalid_argument"),
        (&["--source", "github", "--queue", "q", "--trusted-login", ""], None, "invalid_argument"),
        (&["--source", "stripe", "--queue", "q", "--unverified", "--secret-stdin"], Some("s\n"), "invalid_argument"),
        (&["--source", "generic", "--queue", "q", "--secret-stdin"], Some("s\n"), "invalid_argument"),
    ];
    for (extra, stdin, code_name) in refusals {
        let (code, out, err) = create(extra, stdin);
        assert_ne!(code, 0, "{extra:?} was accepted");
        assert_eq!(json_line(&out)["error"]["code"], code_name, "{extra:?}: {out}");
        assert!(err.starts_with("switchboard: "), "{extra:?}: {err}");
    }
    let unparsed: [(&[&str], &str); 2] = [
        (&["--source", "svn", "--queue", "q"], "unknown source"),
        (&["--source", "github", "--queue", "q", "--trusted-login", "octo", "--allow-all-actors"], "cannot be used"),
    ];
    for (extra, message) in unparsed {
        let (code, _, err) = create(extra, None);
        assert_ne!(code, 0, "{extra:?} was accepted");
        assert!(err.contains(message), "{extra:?}: {err}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, before, "no refusal stored a webhook");
}

#[actix_web::test]
async fn without_an_encryption_key_the_cli_refuses_a_signed_webhook_naming_the_variable_and_stores_nothing() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let human = store.create_human("a@example.com", "A", None).await.unwrap();
    store
        .vend_endpoint(switchboard::store::endpoints::VendEndpoint {
            scope: human.scope,
            slug: "worker".into(),
            grants: Vec::new(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .unwrap();
    let env = [("SWITCHBOARD_DATABASE_URL", db.url.as_str())];
    for (source, stdin) in [("github", None), ("stripe", None), ("standard", Some("whsec_c2VjcmV0\n"))] {
        let mut args = vec!["admin", "create-webhook", "--endpoint", "worker", "--source", source, "--queue", "q"];
        if stdin.is_some() {
            args.push("--secret-stdin");
        }
        let (code, out, err) = run(&env, &args, stdin);
        assert_ne!(code, 0, "{source}: accepted without a key");
        assert!(out.is_empty(), "{source}: nothing on stdout without --json: {out}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{source}: one line: {err}");
        assert!(lines[0].contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"), "{source}: {err}");
        args.push("--json");
        let (code, out, _) = run(&env, &args, stdin);
        assert_ne!(code, 0);
        let e = json_line(&out);
        // SPEC 13: the missing key has a code of its own.
        assert_eq!(e["error"]["code"], "encryption_required", "{e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"), "{e}");
    }
    assert_eq!(db.count("SELECT count(*) FROM webhooks").await, 0, "nothing stored");
    // A generic webhook needs no secret, so no key either.
    let (code, out, err) = run(
        &env,
        &["admin", "create-webhook", "--endpoint", "worker", "--source", "generic", "--queue", "q", "--json"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(json_line(&out)["signing_secret"].is_null());
    assert_eq!(db.count("SELECT count(*) FROM webhooks").await, 1);
}
