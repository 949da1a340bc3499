//! Connections, sinks and subscriptions: what they answer, what they store, and what
//! they refuse.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::todo_state::TeamRole;

use super::*;

const SECRET: &str = "AbCdEf-gotify-app-token-0123456789";

/// The fingerprint the contract names: the first 12 hex of an HMAC-SHA256 of the secret
/// under a key derived from the instance's master key (here the sink tests' `KEY`).
fn keyed_fingerprint(secret: &str) -> String {
    switchboard::vault::Vault::new(Some(&KEY)).fingerprint(secret.as_bytes()).unwrap()
}

#[actix_web::test]
async fn a_connection_answers_its_fingerprint_never_its_secret_and_stores_it_sealed() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let created = connection(&app, &o, "phone", "gotify", SECRET).await;
    assert!(created["id"].as_str().unwrap().starts_with("cn_"), "{created}");
    assert_eq!(created["fingerprint"], keyed_fingerprint(SECRET));
    let unkeyed = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(SECRET.as_bytes()))[..12].to_owned();
    assert_ne!(
        created["fingerprint"],
        unkeyed.as_str(),
        "not the bare SHA-256 prefix a guess could be checked against"
    );
    assert_eq!((created["base_url"].as_str(), created["bound"].as_bool()), (Some(GOTIFY_URL), Some(true)), "{created}");
    let (_, listed) = app.get("/api/v1/connections", &o.token).await;
    for answer in [created.to_string(), listed.to_string()] {
        assert!(!answer.contains(SECRET) && !answer.contains("gotify-app-token"), "{answer}");
    }
    assert_eq!(listed["connections"][0]["name"], "phone");
    let stored = app
        .db
        .count(&format!(
            "SELECT count(*) FROM connections WHERE secret LIKE 'enc:v2:%' AND secret NOT LIKE '%{SECRET}%'"
        ))
        .await;
    assert_eq!(stored, 1, "sealed under a data key of its own");
    // Rotation replaces the secret: a new fingerprint, still never the secret.
    let path = format!("/api/v1/connections/{}/rotate", created["id"].as_str().unwrap());
    let (s, rotated) = app.post(&path, &o.token, json!({"secret": "another-token-9876543210"})).await;
    assert_eq!(s, 200, "{rotated}");
    assert_eq!(rotated["fingerprint"], keyed_fingerprint("another-token-9876543210"));
    assert!(rotated["rotated_at"].is_string() && !rotated.to_string().contains("another-token"));
}

#[actix_web::test]
async fn without_an_encryption_key_a_connection_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = None).await;
    let o = app.owner("a@example.com").await;
    let body = json!({"name": "p", "kind": "gotify", "secret": SECRET, "base_url": GOTIFY_URL});
    let got = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(got.0, StatusCode::CONFLICT, "{}", got.1);
    assert_eq!(got.1["error"]["code"], "encryption_required");
    assert!(!got.1.to_string().contains(SECRET));
    assert_eq!(app.db.count("SELECT count(*) FROM connections").await, 0);
}

#[actix_web::test]
async fn apprise_urls_with_a_refused_scheme_name_the_scheme_echo_no_url_and_store_nothing() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let urls = "tgram://bottoken/chatid, json://collector.example.com/hook?secret=hunter2";
    let body = json!({"name": "a", "kind": "apprise", "secret": urls, "base_url": GOTIFY_URL});
    let got = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(got.0, StatusCode::UNPROCESSABLE_ENTITY, "{}", got.1);
    assert_eq!(got.1["error"]["code"], "forbidden_scheme");
    let message = got.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("json"), "{message}");
    assert!(
        !message.contains("collector") && !message.contains("hunter2") && !message.contains("bottoken"),
        "{message}"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM connections").await, 0);
    // An allowed scheme is stored, and a config key (no scheme at all) always is.
    connection(&app, &o, "a", "apprise", "tgram://bottoken/chatid").await;
    connection(&app, &o, "k", "apprise", "my-config-key").await;
}

#[actix_web::test]
async fn a_sink_posts_with_a_connection_of_its_own_owner_and_kind_only() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let mine = connection(&app, &a, "phone", "gotify", SECRET).await;
    let apprise = connection(&app, &a, "relay", "apprise", "my-config-key").await;
    let theirs = connection(&app, &b, "phone", "gotify", SECRET).await;
    let sink = gotify_sink(&app, &a, "night pager", &mine).await;
    assert!(sink["id"].as_str().unwrap().starts_with("sk_"), "{sink}");
    assert_eq!(
        (sink["enabled"].clone(), sink["budget_per_hour"].clone(), sink["burst"].clone()),
        (json!(true), json!(30), json!(10))
    );
    for (connection, why) in [(&theirs, "another owner's"), (&apprise, "another kind")] {
        let body = json!({"name": "x", "kind": "gotify", "base_url": GOTIFY_URL, "connection_id": connection["id"]});
        let got = app.post("/api/v1/sinks", &a.token, body).await;
        assert_eq!(got.0, StatusCode::UNPROCESSABLE_ENTITY, "{why}: {}", got.1);
        assert_eq!(got.1["error"]["code"], "reference_out_of_scope", "{why}");
    }
    // A connection a sink uses cannot be deleted; once the sink is gone it can.
    let conn_path = format!("/api/v1/connections/{}", mine["id"].as_str().unwrap());
    let (s, _) = app.call("DELETE", &conn_path, Some(&a.token), None).await;
    assert_eq!(s, StatusCode::CONFLICT);
    let sink_path = format!("/api/v1/sinks/{}", sink["id"].as_str().unwrap());
    assert_eq!(app.call("DELETE", &sink_path, Some(&a.token), None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.call("DELETE", &conn_path, Some(&a.token), None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0);
}

#[actix_web::test]
async fn a_destination_the_outbound_guard_refuses_is_refused_on_save() {
    // A sink posts to its connection's destination, so the guard checks it where it is
    // given: on the connection; a sink naming any other URL is a mismatch.
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let c = connection(&app, &a, "phone", "gotify", SECRET).await;
    for url in
        ["https://127.0.0.1:8443", "https://169.254.169.254", "http://203.0.113.10", "https://user:pw@203.0.113.10"]
    {
        let body = json!({"name": "x", "kind": "gotify", "secret": SECRET, "base_url": url});
        let got = app.post("/api/v1/connections", &a.token, body).await;
        assert_eq!(got.0, StatusCode::UNPROCESSABLE_ENTITY, "{url}: {}", got.1);
        assert!(!got.1.to_string().contains("pw@"), "{}", got.1);
        let body = json!({"name": "x", "kind": "gotify", "base_url": url, "connection_id": c["id"]});
        let got = app.post("/api/v1/sinks", &a.token, body).await;
        assert_eq!(
            (got.0, got.1["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("destination_mismatch")),
            "{url}: {}",
            got.1
        );
        assert!(!got.1.to_string().contains("pw@"), "{}", got.1);
    }
    assert_eq!(app.db.count("SELECT count(*) FROM connections").await, 1, "only the first");
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0);
}

#[actix_web::test]
async fn a_stateless_apprise_sink_rechecks_its_urls_against_the_allowlist() {
    // The connection was stored under a wider allowlist; the instance now allows less.
    let app = spawn_with(|s| s.apprise_allowed_schemes = "mailto".into()).await;
    let a = app.owner("a@example.com").await;
    let sealed = connection(&app, &a, "relay", "apprise", "mailto://someone@example.com").await;
    let key = connection(&app, &a, "keyed", "apprise", "config-key").await;
    let ok = json!({"name": "m", "kind": "apprise", "base_url": GOTIFY_URL, "connection_id": sealed["id"], "apprise_mode": "urls"});
    assert_eq!(app.post("/api/v1/sinks", &a.token, ok).await.0, StatusCode::CREATED);
    let tg = app
        .post(
            "/api/v1/connections",
            &a.token,
            json!({"name": "t", "kind": "apprise", "secret": "tgram://x/y", "base_url": GOTIFY_URL}),
        )
        .await;
    assert_eq!(tg.1["error"]["code"], "forbidden_scheme", "{}", tg.1);
    // A key-mode sink (the default for apprise) never reads its secret as URLs.
    let keyed = json!({"name": "k", "kind": "apprise", "base_url": GOTIFY_URL, "connection_id": key["id"]});
    let (s, b) = app.post("/api/v1/sinks", &a.token, keyed).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    assert_eq!(b["apprise_mode"], "key");
}

#[actix_web::test]
async fn subscriptions_name_only_the_sinks_own_endpoints_and_webhooks_and_a_refusal_changes_nothing() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let mine = app.agent(a.scope, "mine").await;
    let theirs = app.agent(b.scope, "theirs").await;
    let c = connection(&app, &a, "phone", "gotify", SECRET).await;
    let sink = gotify_sink(&app, &a, "pager", &c).await;
    let path = format!("/api/v1/sinks/{}/subscriptions", sink["id"].as_str().unwrap());
    let good = json!({"subscriptions": [
        {"events": ["todo.dead_lettered", "relay.exhausted"], "queues": ["builds"], "endpoint_ids": [mine.id.to_string()], "min_severity": "high"},
        {"events": ["delivery.quarantined"]}
    ]});
    let (s, saved) = app.call("PUT", &path, Some(&a.token), Some(&good)).await;
    assert_eq!(s, 200, "{saved}");
    assert_eq!(saved["subscriptions"][0]["include_excerpt"], false, "off unless asked for");
    assert_eq!(saved["subscriptions"][1]["min_severity"], "low");
    let bad = json!({"subscriptions": [{"events": ["todo.dead_lettered"], "endpoint_ids": [theirs.id.to_string()]}]});
    let (s, refused) = app.call("PUT", &path, Some(&a.token), Some(&bad)).await;
    assert_eq!(
        (s, refused["error"]["code"].clone()),
        (StatusCode::UNPROCESSABLE_ENTITY, json!("reference_out_of_scope")),
        "{refused}"
    );
    let (_, now) = app.get(&path, &a.token).await;
    assert_eq!(now, saved, "the refused replacement changed nothing");
    let unknown_event = json!({"subscriptions": [{"events": ["todo.exploded"]}]});
    assert_eq!(app.call("PUT", &path, Some(&a.token), Some(&unknown_event)).await.0, StatusCode::UNPROCESSABLE_ENTITY);
}

#[actix_web::test]
async fn a_team_member_sees_the_teams_sinks_and_only_an_admin_changes_them() {
    let app = spawn().await;
    let admin = app.owner("admin@example.com").await;
    let member = app.owner("member@example.com").await;
    let outsider = app.owner("out@example.com").await;
    let (team, _, _) = app.store.create_team("ops", "admin@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let (s, c) = app
        .post(
            "/api/v1/connections",
            &admin.token,
            json!({"name": "p", "kind": "gotify", "secret": SECRET, "base_url": GOTIFY_URL, "owner": "team:ops"}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let refused = app
        .post(
            "/api/v1/connections",
            &member.token,
            json!({"name": "q", "kind": "gotify", "secret": SECRET, "base_url": GOTIFY_URL, "owner": "team:ops"}),
        )
        .await;
    assert_eq!(refused.1["error"]["code"], "invalid_argument", "a member cannot create for the team: {}", refused.1);
    let body = json!({"name": "ops pager", "kind": "gotify", "base_url": GOTIFY_URL, "connection_id": c["id"], "owner": "team:ops"});
    let (s, sink) = app.post("/api/v1/sinks", &admin.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let (_, seen) = app.get("/api/v1/sinks", &member.token).await;
    assert_eq!(seen["sinks"][0]["name"], "ops pager");
    let (_, none) = app.get("/api/v1/sinks", &outsider.token).await;
    assert_eq!(none["sinks"], json!([]));
    let path = format!("/api/v1/sinks/{}", sink["id"].as_str().unwrap());
    let off = json!({"enabled": false});
    assert_eq!(app.call("PATCH", &path, Some(&member.token), Some(&off)).await.0, StatusCode::FORBIDDEN);
    assert_eq!(app.call("PATCH", &path, Some(&outsider.token), Some(&off)).await.0, StatusCode::NOT_FOUND);
    let (s, changed) = app.call("PATCH", &path, Some(&admin.token), Some(&json!({"enabled": false, "burst": 3}))).await;
    assert_eq!(
        (s, changed["enabled"].clone(), changed["burst"].clone()),
        (StatusCode::OK, json!(false), json!(3)),
        "{changed}"
    );
}

#[actix_web::test]
async fn a_sinks_own_budget_must_stay_within_the_operators_bounds_and_a_lifted_bound_allows_more() {
    let app = spawn_with(|s| {
        s.sink_budget_max_per_hour = 7_200;
        s.sink_burst_max = 500;
    })
    .await;
    let owner = app.owner("bounds@example.com").await;
    let c = connection(&app, &owner, "phone", "gotify", "AbCdEf.123").await;
    let sink = gotify_sink(&app, &owner, "pager", &c).await;
    let path = format!("/api/v1/sinks/{}", sink["id"].as_str().unwrap());
    for (body, field) in [
        (json!({"budget_per_hour": 7_201}), "budget_per_hour"),
        (json!({"budget_per_hour": 0}), "budget_per_hour"),
        (json!({"burst": 501}), "burst"),
    ] {
        let (s, b) = app.call("PATCH", &path, Some(&owner.token), Some(&body)).await;
        assert_eq!(
            (s, b["error"]["code"].clone()),
            (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_argument")),
            "{body}: {b}"
        );
        assert!(b["error"]["message"].as_str().unwrap_or_default().contains(field), "{b}");
    }
    let (_, unchanged) = app.get("/api/v1/sinks", &owner.token).await;
    assert_eq!(
        (unchanged["sinks"][0]["budget_per_hour"].clone(), unchanged["sinks"][0]["burst"].clone()),
        (json!(30), json!(10))
    );
    let (s, b) =
        app.call("PATCH", &path, Some(&owner.token), Some(&json!({"budget_per_hour": 7_200, "burst": 500}))).await;
    assert_eq!(
        (s, b["budget_per_hour"].clone(), b["burst"].clone()),
        (StatusCode::OK, json!(7_200), json!(500)),
        "{b}"
    );
}

#[test]
fn defaults_above_the_operators_bounds_refuse_to_start() {
    let mut settings = switchboard::config::Settings::from_env().expect("settings");
    settings.sink_burst = 200;
    let refused = switchboard::sinks::settings::SinkSettings::from_settings(&settings).map(|_| ()).unwrap_err();
    assert!(refused.contains("SWITCHBOARD_SINK_BURST (200) exceeds SWITCHBOARD_SINK_BURST_MAX (100)"), "{refused}");
    settings.sink_burst = 10;
    settings.sink_budget_per_hour = 4_000;
    assert!(switchboard::sinks::settings::SinkSettings::from_settings(&settings).is_err());
    settings.sink_budget_max_per_hour = 4_000;
    assert!(switchboard::sinks::settings::SinkSettings::from_settings(&settings).is_ok());
}
