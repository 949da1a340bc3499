//! Recording deliveries: one event per provider delivery id, routed todos carrying their
//! event (and so the sender gate), quarantine with its reason.

use serde_json::json;
use switchboard::domain::todo_state::{Disposition, QuarantineReason, ReadyReason, TrustMode};
use switchboard::store::deliveries::{Delivery, Recorded};
use switchboard::store::todos::NewTodo;
use switchboard::store::webhooks::NewWebhook;
use switchboard::vault::Vault;

use crate::harness::TestApp;

fn delivery(
    app_scope: switchboard::domain::ids::ScopeId,
    webhook: &switchboard::store::webhooks::WebhookRow,
    id: &str,
    todos: Vec<NewTodo>,
) -> Delivery {
    Delivery {
        webhook_id: webhook.id,
        scope_id: app_scope,
        endpoint_id: webhook.endpoint_id,
        source: "github".into(),
        event_type: Some("push".into()),
        external_id: Some(id.into()),
        trust_mode: TrustMode::Signed,
        verified: true,
        headers: json!({"x-github-event": "push"}),
        payload: br#"{"ref":"main"}"#.to_vec(),
        disposition: Disposition::Routed,
        todos,
        notice: None,
    }
}

/// A GitHub webhook on `endpoint` routing to `builds`, trusting no one.
fn github_webhook(
    scope: switchboard::domain::ids::ScopeId,
    endpoint: switchboard::domain::ids::EndpointId,
) -> NewWebhook {
    NewWebhook {
        scope,
        endpoint_id: endpoint,
        source_type: switchboard::intake::verify::SourceType::Github,
        queue: "builds".into(),
        max_attempts: None,
        trusted_actors: None,
        secret: None,
        unverified: false,
    }
}

#[actix_web::test]
async fn a_delivery_is_recorded_once_and_its_todos_carry_the_sender_gate() {
    let (app, o, ep) = TestApp::with_worker().await;
    let vault = Vault::new(Some(&switchboard::config::SecretKey([3; 32])));
    let created = app.store.create_webhook(&vault, github_webhook(o.scope, ep.id)).await.unwrap();
    assert!(created.ingest_token.starts_with("sbw_"));
    assert!(created.signing_secret.as_deref().unwrap().starts_with("whsec_"));
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks WHERE signing_secret LIKE 'enc:v1:%'").await, 1);
    let found = app.store.webhook_by_ingest_token(&created.ingest_token).await.unwrap().unwrap();
    let secret = vault.open(found.sealed_secret.as_deref().unwrap()).unwrap();
    assert_eq!(secret, created.signing_secret.unwrap().into_bytes());

    let wh = created.webhook;
    let todo = NewTodo {
        source: Some("github".into()),
        kind: Some("push".into()),
        ..NewTodo::new(ep.id, "builds", "push to main")
    };
    app.signals.take().await;
    let first = app.store.record_delivery(delivery(o.scope, &wh, "d-1", vec![todo.clone()])).await.unwrap();
    let Recorded::New { event_id, todos } = first else { panic!("expected a new delivery") };
    assert_eq!(todos.len(), 1);
    assert_eq!(todos[0].todo.event_id, Some(event_id));
    let ready = app.signals.take_ready().await;
    assert_eq!((ready.len(), ready[0].reason, ready[0].todo.sender_gate), (1, ReadyReason::Created, true));

    let again = app.store.record_delivery(delivery(o.scope, &wh, "d-1", vec![todo])).await.unwrap();
    assert!(matches!(again, Recorded::Duplicate { event_id: e, .. } if e == event_id));
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 1, "a redelivery creates no second todo");
    assert!(app.signals.take().await.is_empty());

    let held = NewTodo {
        event_id: None,
        quarantine_reason: Some(QuarantineReason::UntrustedActor),
        ..NewTodo::new(ep.id, "quarantine", "from a stranger")
    };
    let mut d = delivery(o.scope, &wh, "d-2", vec![held]);
    d.disposition = Disposition::Quarantined;
    app.store.record_delivery(d).await.unwrap();
    assert_eq!(
        app.db
            .count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND quarantine_reason = 'untrusted_actor'")
            .await,
        1
    );
    assert!(app.signals.take().await.is_empty(), "quarantine never rings");
}

#[actix_web::test]
async fn without_an_encryption_key_a_signed_webhook_is_refused_and_nothing_is_stored() {
    let (app, o, ep) = TestApp::with_worker().await;
    let err = app.store.create_webhook(&Vault::new(None), github_webhook(o.scope, ep.id)).await.unwrap_err();
    assert!(err.to_string().contains("encryption_required"), "{err}");
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, 0);
}

#[actix_web::test]
async fn a_delivery_to_a_revoked_endpoint_records_neither_event_nor_todo_however_it_is_routed() {
    let (app, o, ep) = TestApp::with_worker().await;
    let vault = Vault::new(Some(&switchboard::config::SecretKey([3; 32])));
    let wh = app.store.create_webhook(&vault, github_webhook(o.scope, ep.id)).await.unwrap().webhook;
    app.store.revoke_endpoint(&[o.scope], ep.id).await.unwrap();
    let one = vec![NewTodo::new(ep.id, "builds", "push")];
    let err = app.store.record_delivery(delivery(o.scope, &wh, "d-1", one)).await.unwrap_err();
    assert!(matches!(err, switchboard::error::Error::Conflict(_)), "{err:?}");
    let two = vec![NewTodo::new(ep.id, "builds", "push"), NewTodo::new(ep.id, "deploys", "push")];
    let err = app.store.record_delivery(delivery(o.scope, &wh, "d-2", two)).await.unwrap_err();
    assert!(matches!(err, switchboard::error::Error::Conflict(_)), "{err:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM events").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}

#[actix_web::test]
async fn the_sender_gate_of_a_routed_todo_follows_its_event_trust() {
    let (app, o, ep) = TestApp::with_worker().await;
    let vault = Vault::new(Some(&switchboard::config::SecretKey([3; 32])));
    let wh = app.store.create_webhook(&vault, github_webhook(o.scope, ep.id)).await.unwrap().webhook;
    for (id, trust, verified, gate) in [
        ("open", TrustMode::Open, false, false),
        ("token", TrustMode::Token, false, true),
        ("signed", TrustMode::Signed, true, true),
    ] {
        app.signals.take().await;
        let mut d = delivery(o.scope, &wh, id, vec![NewTodo::new(ep.id, "builds", "push")]);
        (d.trust_mode, d.verified) = (trust, verified);
        app.store.record_delivery(d).await.unwrap();
        let ready = app.signals.take_ready().await;
        assert_eq!(ready.len(), 1, "{id}");
        assert_eq!(ready[0].todo.sender_gate, gate, "{id}");
    }
}
