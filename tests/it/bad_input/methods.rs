//! A known path asked with a method it does not take answers 405 `method_not_allowed`
//! with an `Allow` header listing exactly the methods the path takes; an unknown path
//! stays 404. HEAD and OPTIONS are methods like any other: no path serves them, so they
//! answer 405 too (HEAD without a body).

use std::collections::BTreeSet;

use awc::http::StatusCode;
use serde_json::Value;

use super::expect_error;
use crate::harness::TestApp;

/// Every method a path could be asked with.
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// `pattern` with each `{param}` filled in: which value does not matter, the method is
/// refused by routing before any extractor reads the path.
fn concrete(pattern: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in pattern.chars() {
        match c {
            '{' => in_param = true,
            '}' => {
                in_param = false;
                out.push_str("x1");
            }
            _ if in_param => {}
            c => out.push(c),
        }
    }
    out
}

/// Sends `method path` without credentials: status, `Allow` (split and sorted) and body.
async fn ask(app: &TestApp, method: &str, path: &str) -> (StatusCode, Option<BTreeSet<String>>, Value) {
    let m: awc::http::Method = method.parse().unwrap();
    let mut resp = app.client.request(m, format!("{}{path}", app.base)).send().await.unwrap();
    let allow = resp
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(',').map(|m| m.trim().to_owned()).collect::<BTreeSet<_>>());
    let body = resp.body().await.unwrap();
    (resp.status(), allow, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[actix_web::test]
async fn every_documented_path_answers_a_method_it_does_not_declare_with_405_and_allow_listing_its_methods() {
    let app = TestApp::spawn().await;
    let (status, doc) = app.call("GET", "/api/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() > 50, "the document lists the API: {}", paths.len());
    let mut checked = 0;
    for (pattern, item) in paths {
        let declared: BTreeSet<String> = item
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| METHODS.contains(&k.to_uppercase().as_str()))
            .map(|k| k.to_uppercase())
            .collect();
        assert!(!declared.is_empty(), "{pattern}");
        let path = concrete(pattern);
        for method in METHODS.iter().filter(|m| !declared.contains(**m)) {
            let what = format!("{method} {pattern}");
            let (status, allow, body) = ask(&app, method, &path).await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{what}: {body}");
            assert_eq!(allow.as_ref(), Some(&declared), "{what}: Allow lists the declared methods");
            if *method != "HEAD" {
                expect_error(&(status, body), StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", &what);
            }
            checked += 1;
        }
        // A declared method is routed (to its credentials check or its answer), never 405.
        for method in &declared {
            let (status, _, body) = ask(&app, method, &path).await;
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {pattern}: {body}");
        }
    }
    assert!(checked > 250, "only {checked} undeclared methods tried");

    // The document itself, the MCP endpoint and a Board page are paths like the others.
    let get_only: BTreeSet<String> = ["GET".to_owned()].into();
    let (status, allow, _) = ask(&app, "POST", "/api/openapi.json").await;
    assert_eq!((status, allow), (StatusCode::METHOD_NOT_ALLOWED, Some(get_only)));
    let mcp: BTreeSet<String> = ["GET", "POST", "DELETE"].map(str::to_owned).into();
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let (status, allow, body) = ask(&app, method, "/mcp/no-such-slug").await;
        assert_eq!((status, allow.as_ref()), (StatusCode::METHOD_NOT_ALLOWED, Some(&mcp)), "{method} /mcp: {body}");
        expect_error(&(status, body), StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", method);
    }
    let login: BTreeSet<String> = ["GET", "POST"].map(str::to_owned).into();
    let (status, allow, _) = ask(&app, "DELETE", "/login").await;
    assert_eq!((status, allow), (StatusCode::METHOD_NOT_ALLOWED, Some(login)), "the Board's routes too");
}

#[actix_web::test]
async fn a_literal_path_beside_an_id_pattern_lists_its_own_methods_and_an_unknown_path_is_404() {
    let app = TestApp::spawn().await;
    let post: BTreeSet<String> = ["POST".to_owned()].into();
    // `claim-next` is a path of its own, not a todo id that `GET …/{id}` would look up.
    for method in ["GET", "PUT", "DELETE"] {
        let (status, allow, body) = ask(&app, method, "/api/v1/agent/todos/claim-next").await;
        assert_eq!((status, allow.as_ref()), (StatusCode::METHOD_NOT_ALLOWED, Some(&post)), "{method}: {body}");
    }
    for path in [
        "/api/v1/nope",
        "/api/v1/agent/todos/x1/nope",
        "/api/v1/agent/todos/x1/claim/again",
        "/api/v2/agent/todos",
        "/nope",
        "/mcp",
    ] {
        for method in ["GET", "POST", "PUT"] {
            let (status, allow, body) = ask(&app, method, path).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
            assert!(allow.is_none(), "{method} {path}: no Allow on a 404");
        }
    }
}
