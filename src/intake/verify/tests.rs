//! Cross-scheme tests of the public API, and the property tests: `verify` is the fuzz
//! target for inbound webhooks, kept here as a property that it never panics on any
//! headers, body, secret or clock.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::DateTime;
use hmac::{Hmac, Mac};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

use super::test_support::{NOW, now};
use super::*;

const SIGNED: [SourceType; 4] = [SourceType::Github, SourceType::Gitea, SourceType::Stripe, SourceType::Standard];

fn mac(secret: &[u8], content: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
    mac.update(content);
    mac.finalize().into_bytes().to_vec()
}

/// Headers under which `body` verifies for `source` at [`NOW`], computed from each
/// provider's published scheme independently of the code under test. `secret` is used
/// raw (for `standard`: it must not start with `whsec_`).
fn signed_headers(source: SourceType, secret: &[u8], body: &[u8]) -> Vec<(String, String)> {
    let header = |name: &str, value: String| vec![(name.to_owned(), value)];
    let with_prefix = |prefix: &str| [prefix.as_bytes(), body].concat();
    match source {
        SourceType::Github => header("X-Hub-Signature-256", format!("sha256={}", hex::encode(mac(secret, body)))),
        SourceType::Gitea => header("X-Gitea-Signature", hex::encode(mac(secret, body))),
        SourceType::Stripe => {
            let v1 = hex::encode(mac(secret, &with_prefix(&format!("{NOW}."))));
            header("Stripe-Signature", format!("t={NOW},v1={v1}"))
        }
        SourceType::Standard => {
            let v1 = STANDARD.encode(mac(secret, &with_prefix(&format!("msg_1.{NOW}."))));
            vec![
                ("webhook-id".to_owned(), "msg_1".to_owned()),
                ("webhook-timestamp".to_owned(), NOW.to_string()),
                ("webhook-signature".to_owned(), format!("v1,{v1}")),
            ]
        }
        SourceType::Generic => Vec::new(),
    }
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect()
}

#[test]
fn source_types_round_trip_through_their_wire_names() {
    let names = ["github", "gitea", "stripe", "standard", "generic"];
    assert_eq!(SourceType::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(), names);
    for source in SourceType::ALL {
        assert_eq!(source.as_str().parse::<SourceType>(), Ok(*source));
        assert_eq!(source.to_string(), source.as_str());
        assert_eq!(serde_json::to_string(source).unwrap(), format!("\"{source}\""));
        assert_eq!(serde_json::from_str::<SourceType>(&format!("\"{source}\"")).unwrap(), *source);
    }
    assert!("GitHub".parse::<SourceType>().is_err());
    assert!("slack".parse::<SourceType>().is_err());
}

#[test]
fn only_generic_is_unsigned() {
    assert_eq!(SIGNED.iter().filter(|s| s.is_signed()).count(), 4);
    assert!(!SourceType::Generic.is_signed());
}

#[test]
fn every_signed_source_verifies_a_correctly_signed_body() {
    let body = br#"{"id":"evt_1","type":"ping"}"#;
    for source in SIGNED {
        let h = signed_headers(source, b"secret", body);
        let inbound = Inbound { headers: &h, body };
        assert_eq!(verify(source, Some(b"secret"), &inbound, now()), Ok(Verdict::Verified), "{source}");
    }
}

#[test]
fn a_signed_source_without_a_usable_secret_is_no_secret_whatever_the_headers() {
    let body = b"{}";
    for source in SIGNED {
        let h = signed_headers(source, b"secret", body);
        for inbound in [Inbound { headers: &h, body }, Inbound { headers: &[], body }] {
            assert_eq!(verify(source, None, &inbound, now()), Err(VerifyError::NoSecret), "{source}");
            assert_eq!(verify(source, Some(b""), &inbound, now()), Err(VerifyError::NoSecret), "{source}");
        }
    }
}

#[test]
fn a_signed_source_without_its_headers_is_a_missing_signature() {
    for source in SIGNED {
        let inbound = Inbound { headers: &[], body: b"{}" };
        assert_eq!(verify(source, Some(b"k"), &inbound, now()), Err(VerifyError::MissingSignature), "{source}");
    }
}

#[test]
fn a_signature_for_one_scheme_does_not_pass_another() {
    let body = b"{}";
    for signer in SIGNED {
        let h = signed_headers(signer, b"k", body);
        for checker in SIGNED.into_iter().filter(|s| *s != signer) {
            let inbound = Inbound { headers: &h, body };
            assert!(verify(checker, Some(b"k"), &inbound, now()).is_err(), "{signer} passed {checker}");
        }
    }
}

#[test]
fn generic_is_unverified_with_or_without_a_secret_and_ignores_signatures() {
    let h = headers(&[("X-Hub-Signature-256", "sha256=garbage")]);
    let inbound = Inbound { headers: &h, body: b"anything" };
    assert_eq!(verify(SourceType::Generic, None, &inbound, now()), Ok(Verdict::Unverified));
    assert_eq!(verify(SourceType::Generic, Some(b"k"), &inbound, now()), Ok(Verdict::Unverified));
}

#[test]
fn header_lookup_ignores_case_and_the_first_occurrence_wins() {
    let h = headers(&[("x-github-event", "push"), ("X-GitHub-Event", "issues")]);
    let inbound = Inbound { headers: &h, body: b"" };
    assert_eq!(inbound.header("X-GITHUB-EVENT"), Some("push"));
    assert_eq!(inbound.header("X-GitHub-Delivery"), None);
}

#[test]
fn delivery_ids_come_from_each_providers_field() {
    let h = headers(&[
        ("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"),
        ("X-Gitea-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473"),
        ("webhook-id", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"),
        ("X-Delivery-Id", "generic-7"),
    ]);
    let inbound = Inbound { headers: &h, body: br#"{"id":"evt_1NG8Du2eZvKYlo2C","type":"charge.succeeded"}"# };
    assert_eq!(delivery_id(SourceType::Github, &inbound).as_deref(), Some("72d3162e-cc78-11e3-81ab-4c9367dc0958"));
    assert_eq!(delivery_id(SourceType::Gitea, &inbound).as_deref(), Some("f6266f16-1bf3-46a5-9ea4-602e06ead473"));
    assert_eq!(delivery_id(SourceType::Stripe, &inbound).as_deref(), Some("evt_1NG8Du2eZvKYlo2C"));
    assert_eq!(delivery_id(SourceType::Standard, &inbound).as_deref(), Some("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"));
    assert_eq!(delivery_id(SourceType::Generic, &inbound).as_deref(), Some("generic-7"));
}

#[test]
fn generic_delivery_id_falls_back_from_x_delivery_id_to_webhook_id() {
    let h = headers(&[("Webhook-Id", "wh-1"), ("X-Delivery-Id", "  ")]);
    assert_eq!(delivery_id(SourceType::Generic, &Inbound { headers: &h, body: b"" }).as_deref(), Some("wh-1"));
}

#[test]
fn a_missing_empty_or_overlong_delivery_id_falls_back_to_the_body_hash_except_for_generic() {
    let body = b"{\"hello\":\"world\"}";
    let body_hash = hex::encode(Sha256::digest(body));
    assert_eq!(delivery_id(SourceType::Generic, &Inbound { headers: &[], body }), None, "generic: no dedup");
    let long = "x".repeat(MAX_LABEL_BYTES + 1);
    let at_limit = "y".repeat(MAX_LABEL_BYTES);
    for (source, name) in [
        (SourceType::Github, "X-GitHub-Delivery"),
        (SourceType::Gitea, "X-Gitea-Delivery"),
        (SourceType::Standard, "webhook-id"),
    ] {
        assert_eq!(delivery_id(source, &Inbound { headers: &[], body }).as_ref(), Some(&body_hash), "{source} missing");
        for (value, expected) in [("", &body_hash), (long.as_str(), &body_hash), (at_limit.as_str(), &at_limit)] {
            let h = headers(&[(name, value)]);
            assert_eq!(
                delivery_id(source, &Inbound { headers: &h, body }).as_ref(),
                Some(expected),
                "{source} {}",
                value.len()
            );
        }
    }
    assert_eq!(delivery_id(SourceType::Stripe, &Inbound { headers: &[], body }), Some(body_hash));
}

#[test]
fn a_stripe_id_that_is_not_a_top_level_string_falls_back_to_the_body_hash() {
    for body in [&br#"{"id":42}"#[..], br#"{"data":{"id":"evt_nested"}}"#, br#"["evt_1"]"#, b"not json", b""] {
        let expected = hex::encode(Sha256::digest(body));
        assert_eq!(delivery_id(SourceType::Stripe, &Inbound { headers: &[], body }), Some(expected));
    }
}

#[test]
fn event_types_come_from_each_providers_field() {
    let h = headers(&[("X-GitHub-Event", "pull_request"), ("X-Gitea-Event", "push"), ("X-Event", "build.done")]);
    let inbound = Inbound { headers: &h, body: br#"{"id":"evt_1","type":"invoice.paid","data":{"type":"x"}}"# };
    let label = |source| event_type(source, &inbound);
    assert_eq!(label(SourceType::Github).as_deref(), Some("pull_request"));
    assert_eq!(label(SourceType::Gitea).as_deref(), Some("push"));
    assert_eq!(label(SourceType::Stripe).as_deref(), Some("invoice.paid"));
    assert_eq!(label(SourceType::Standard).as_deref(), Some("invoice.paid"));
    assert_eq!(label(SourceType::Generic).as_deref(), Some("build.done"));
}

#[test]
fn an_event_type_is_none_when_absent_empty_overlong_or_not_a_string() {
    let long = "e".repeat(MAX_LABEL_BYTES + 1);
    for body in [&br#"{"type":7}"#[..], br#"{"data":{"type":"x"}}"#, b"not json", br#"{"type":""}"#] {
        assert_eq!(event_type(SourceType::Standard, &Inbound { headers: &[], body }), None);
    }
    for value in ["", "   ", long.as_str()] {
        let h = headers(&[("X-GitHub-Event", value)]);
        assert_eq!(event_type(SourceType::Github, &Inbound { headers: &h, body: b"" }), None);
    }
    assert_eq!(event_type(SourceType::Generic, &Inbound { headers: &[], body: br#"{"type":"x"}"# }), None);
}

#[test]
fn the_debug_form_of_a_request_shows_header_names_but_no_values_or_body() {
    let h = headers(&[("Authorization", "Bearer sbk_very_secret")]);
    let shown = format!("{:?}", Inbound { headers: &h, body: b"private payload" });
    assert!(shown.contains("Authorization") && shown.contains("15"));
    assert!(!shown.contains("sbk_very_secret") && !shown.contains("private payload"));
}

#[test]
fn error_messages_name_no_header_contents() {
    let h = headers(&[("X-Gitea-Signature", "secret-looking-value")]);
    let err = verify(SourceType::Gitea, Some(b"k"), &Inbound { headers: &h, body: b"" }, now()).unwrap_err();
    assert!(!err.to_string().contains("secret-looking-value"));
}

/// Header names every scheme looks at, plus arbitrary ones.
fn header_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "X-Hub-Signature-256",
            "x-gitea-signature",
            "Stripe-Signature",
            "webhook-id",
            "webhook-timestamp",
            "webhook-signature",
            "X-GitHub-Delivery",
            "X-Gitea-Delivery",
            "X-Delivery-Id",
            "Webhook-Id",
            "X-GitHub-Event",
            "X-Gitea-Event",
            "X-Event",
        ])
        .prop_map(str::to_owned),
        "[A-Za-z-]{1,24}",
    ]
}

/// Arbitrary text, plus near-valid shapes of every scheme so that parsing gets past its
/// first check, plus oversized values.
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "sha256=[0-9a-fA-Fz]{0,70}",
        "[0-9a-f]{60,66}",
        "t=[0-9+-]{0,21}(, ?v[01]=[0-9a-fz]{0,66}){0,4}",
        "(v1a?,[A-Za-z0-9+/=]{0,46} ?){0,4}",
        "[0-9]{0,21}",
        "[ -~]{4000,4200}",
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        r#"\{"id":("[a-z_]{0,12}"|[0-9]{1,3}|null),"type":("[a-z.]{0,12}"|\[\])\}"#.prop_map(String::into_bytes),
    ]
}

fn secret() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        Just(None),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(Some),
        "whsec_[A-Za-z0-9+/=]{0,48}".prop_map(|s| Some(s.into_bytes())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn verify_never_panics_on_arbitrary_requests(
        source in prop::sample::select(SourceType::ALL.to_vec()),
        secret in secret(),
        headers in prop::collection::vec((header_name(), header_value()), 0..6),
        body in body(),
        now_secs in -8_000_000_000_000i64..8_000_000_000_000,
    ) {
        let inbound = Inbound { headers: &headers, body: &body };
        let now = DateTime::from_timestamp(now_secs, 0).unwrap();
        let verdict = verify(source, secret.as_deref(), &inbound, now);
        if source == SourceType::Generic {
            prop_assert_eq!(verdict, Ok(Verdict::Unverified));
        }
        if let Some(id) = delivery_id(source, &inbound) {
            prop_assert!(!id.is_empty() && id.len() <= MAX_LABEL_BYTES.max(64));
        } else {
            prop_assert_eq!(source, SourceType::Generic);
        }
        if let Some(kind) = event_type(source, &inbound) {
            prop_assert!(!kind.is_empty() && kind.len() <= MAX_LABEL_BYTES);
        }
    }

    #[test]
    fn a_correctly_signed_body_always_verifies_and_any_single_byte_change_never_does(
        source in prop::sample::select(SIGNED.to_vec()),
        secret in prop::collection::vec(any::<u8>(), 1..64).prop_filter("raw key", |s| !s.starts_with(b"whsec_")),
        body in prop::collection::vec(any::<u8>(), 1..512),
        index in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let h = signed_headers(source, &secret, &body);
        prop_assert_eq!(verify(source, Some(&secret), &Inbound { headers: &h, body: &body }, now()), Ok(Verdict::Verified));
        let mut tampered = body.clone();
        tampered[index.index(body.len())] ^= flip;
        let result = verify(source, Some(&secret), &Inbound { headers: &h, body: &tampered }, now());
        prop_assert_eq!(result, Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_correct_signature_never_verifies_under_a_different_secret(
        source in prop::sample::select(SIGNED.to_vec()),
        secret in prop::collection::vec(any::<u8>(), 1..64).prop_filter("raw key", |s| !s.starts_with(b"whsec_")),
        other in prop::collection::vec(any::<u8>(), 1..64).prop_filter("raw key", |s| !s.starts_with(b"whsec_")),
        body in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        // HMAC zero-pads short keys, so keys differing only in trailing NULs are the same key.
        let trimmed = |k: &[u8]| k.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        prop_assume!(secret[..trimmed(&secret)] != other[..trimmed(&other)]);
        let h = signed_headers(source, &secret, &body);
        let result = verify(source, Some(&other), &Inbound { headers: &h, body: &body }, now());
        prop_assert_eq!(result, Err(VerifyError::BadSignature));
    }
}
