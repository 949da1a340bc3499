//! Two admins of one team: B can pair a sink with the connection A stored, but never send
//! A's secret to a destination A did not choose; a destination moves only with the secret
//! given again (rotate); fingerprints are keyed, not the secret's bare SHA-256.

use serde_json::json;
use switchboard::domain::todo_state::TeamRole;

use super::*;

#[actix_web::test]
async fn team_admin_b_cannot_send_admin_as_secret_to_a_destination_a_did_not_choose() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let (team, _, _) = app.store.create_team("ops", "a@example.com").await.unwrap();
    app.store.add_team_member(team, b.id, TeamRole::Admin).await.unwrap();
    let (home, evil) = (Receiver::start().await, Receiver::start().await);
    let body =
        json!({"name": "pager", "kind": "gotify", "secret": SECRET, "base_url": home.base(), "owner": "team:ops"});
    let (s, c) = app.post("/api/v1/connections", &a.token, body).await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_owned();

    // B's sink naming another destination is refused and stores nothing.
    let hijack = json!({"name": "mine", "kind": "gotify", "base_url": evil.base(), "connection_id": cid,
                        "owner": "team:ops", "enabled": false});
    let (s, refused) = app.post("/api/v1/sinks", &b.token, hijack).await;
    assert_eq!((s.as_u16(), refused["error"]["code"].as_str()), (422, Some("destination_mismatch")), "{refused}");
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0);
    holds_no_secret(&refused.to_string());

    // B's sink without a URL posts where A bound the secret, and only there.
    let ok = json!({"name": "mine", "kind": "gotify", "connection_id": cid, "owner": "team:ops"});
    let (s, sink) = app.post("/api/v1/sinks", &b.token, ok).await;
    assert_eq!(s, 201, "{sink}");
    assert_eq!(shown(&sink), home.base(), "{sink}");
    let (s, tested) =
        app.post(&format!("/api/v1/sinks/{}/test", sink["id"].as_str().unwrap()), &b.token, json!({})).await;
    assert_eq!((s.as_u16(), &tested["ok"]), (200, &json!(true)), "{tested}");
    assert_eq!(home.wait_for(1).await[0].header("x-gotify-key"), Some(SECRET));

    // Moving the destination takes the secret again: without it B cannot.
    let (s, b_rotates) =
        app.post(&format!("/api/v1/connections/{cid}/rotate"), &b.token, json!({"base_url": evil.base()})).await;
    assert_eq!(s, 422, "a rotation without the secret is refused: {b_rotates}");
    let (_, listed) = app.get("/api/v1/connections", &a.token).await;
    assert_eq!(listed["connections"][0]["base_url"], home.base(), "{listed}");
    assert_eq!(evil.count(), 0, "A's secret never went to B's host");
}

#[actix_web::test]
async fn rotating_with_a_base_url_moves_the_destination_and_its_sinks_with_the_new_secret() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let (old, new) = (Receiver::start().await, Receiver::start().await);
    let c = connection(&app, &o, "phone", SECRET, &old).await;
    let cid = c["id"].as_str().unwrap().to_owned();
    let (s, sink) =
        app.post("/api/v1/sinks", &o.token, json!({"name": "s", "kind": "gotify", "connection_id": cid})).await;
    assert_eq!(s, 201, "{sink}");
    let sink_id = sink["id"].as_str().unwrap().to_owned();

    // A base URL that is not a base URL is refused and changes nothing.
    let bad = json!({"secret": "new-token", "base_url": format!("{}/?to=x", new.base())});
    let (s, b) = app.post(&format!("/api/v1/connections/{cid}/rotate"), &o.token, bad).await;
    assert_eq!(s, 422, "{b}");
    let rotate = json!({"secret": "new-token", "base_url": format!("{}/", new.base())});
    let (s, rotated) = app.post(&format!("/api/v1/connections/{cid}/rotate"), &o.token, rotate).await;
    assert_eq!(s, 200, "{rotated}");
    assert_eq!((&rotated["base_url"], &rotated["bound"]), (&json!(new.base()), &json!(true)), "{rotated}");
    let (_, sinks) = app.get("/api/v1/sinks", &o.token).await;
    assert_eq!(shown(&sinks["sinks"][0]), new.base(), "the sink follows its connection: {sinks}");
    let (s, tested) = app.post(&format!("/api/v1/sinks/{sink_id}/test"), &o.token, json!({})).await;
    assert_eq!((s.as_u16(), &tested["ok"]), (200, &json!(true)), "{tested}");
    assert_eq!(new.wait_for(1).await[0].header("x-gotify-key"), Some("new-token"));
    assert_eq!(old.count(), 0);
}

#[actix_web::test]
async fn a_connection_needs_its_destination_and_a_sink_naming_another_is_refused_with_nothing_stored() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::start().await;
    for kind in ["gotify", "apprise", "cairn"] {
        let (s, b) =
            app.post("/api/v1/connections", &o.token, json!({"name": kind, "kind": kind, "secret": "t"})).await;
        assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (422, Some("invalid_argument")), "{kind}: {b}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM connections").await, 0);
    let c = connection(&app, &o, "phone", SECRET, &rx).await;
    let other = format!("http://127.0.0.2:{}", rx.port());
    let (s, b) = app
        .post(
            "/api/v1/sinks",
            &o.token,
            json!({"name": "s", "kind": "gotify", "base_url": other, "connection_id": c["id"]}),
        )
        .await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (422, Some("destination_mismatch")), "{b}");
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0);
    let same = format!("{}/", rx.base());
    let (s, b) = app
        .post(
            "/api/v1/sinks",
            &o.token,
            json!({"name": "s", "kind": "gotify", "base_url": same, "connection_id": c["id"]}),
        )
        .await;
    assert_eq!(s, 201, "the same destination, normalised, is accepted: {b}");
}

#[actix_web::test]
async fn a_fingerprint_is_a_keyed_hmac_and_differs_from_the_secrets_sha256_prefix() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::start().await;
    let c = connection(&app, &o, "phone", SECRET, &rx).await;
    let print = c["fingerprint"].as_str().unwrap();
    assert_eq!(print.len(), 12, "{c}");
    assert_ne!(print, sha256_prefix(SECRET), "a guess at a short secret cannot be checked against it");
    // Listing shows the same fingerprint again (it is stored, not recomputed per answer).
    let (_, listed) = app.get("/api/v1/connections", &o.token).await;
    assert_eq!(listed["connections"][0]["fingerprint"], print);

    let ep = agent(&app, &o, "w", &[]).await;
    let body = json!({"endpoint_id": ep.id, "source_type": "github", "queue": "inbox", "secret": "whsec-short"});
    let (s, w) = app.post("/api/v1/webhooks", &o.token, body).await;
    assert_eq!(s, 201, "{w}");
    let (_, listed) = app.get("/api/v1/webhooks", &o.token).await;
    let shown = listed["webhooks"][0]["secret_fingerprint"].as_str().unwrap_or_default();
    assert_eq!(shown.len(), 12, "a webhook's secret has a fingerprint: {listed}");
    assert_ne!(shown, sha256_prefix("whsec-short"), "{listed}");
}
