use chrono::TimeZone;

use super::*;

fn key(queue: &str) -> QueueKey {
    QueueKey { endpoint: "ci-bot".into(), queue: queue.into() }
}

/// A report where everything was measured and nothing is wrong.
fn calm() -> Report {
    Report {
        since: Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap(),
        until: Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap(),
        pending: Measured::Ok(vec![PendingLine { key: key("builds"), pending: 3, oldest_pending_seconds: 120 }]),
        claimed: Measured::Ok(vec![ClaimedLine { key: key("builds"), claimed: 2, stalled: 0 }]),
        dead: Measured::Ok(vec![]),
        quarantined: Measured::Ok(vec![]),
        unheard: Measured::Ok(vec![]),
        clocked_out: Measured::Ok(vec!["reviewer".into()]),
        deferred: Measured::Ok(vec![]),
        undeliverable: Measured::Ok(vec![]),
        unbound: Measured::Ok(vec![]),
    }
}

#[test]
fn a_fully_measured_report_with_no_trouble_is_quiet() {
    assert!(calm().is_quiet(3600));
    assert_eq!(calm().trouble(3600), 0);
}

#[test]
fn an_unmeasured_section_is_never_quiet_even_with_nothing_else_wrong() {
    let mut r = calm();
    r.unheard = Measured::Unavailable("timed out".into());
    assert!(!r.is_quiet(3600));
    assert_eq!(r.unavailable(), vec![("unheard_doorbells", "timed out")]);
    assert_eq!(r.trouble(3600), 0, "an unmeasured section adds nothing: it is not a zero either");
}

#[test]
fn each_trouble_count_makes_the_digest_not_quiet() {
    type Change = Box<dyn Fn(&mut Report)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "stalled",
            Box::new(|r| r.claimed = Measured::Ok(vec![ClaimedLine { key: key("b"), claimed: 1, stalled: 1 }])),
        ),
        ("dead", Box::new(|r| r.dead = Measured::Ok(vec![DeadLine { key: key("b"), dead_letters: 1, first: vec![] }]))),
        (
            "quarantined",
            Box::new(|r| r.quarantined = Measured::Ok(vec![QuarantineLine { webhook: "w".into(), quarantined: 2 }])),
        ),
        ("unheard", Box::new(|r| r.unheard = Measured::Ok(vec![UnheardLine { endpoint: "e".into(), unheard: 1 }]))),
        (
            "undeliverable",
            Box::new(|r| {
                r.undeliverable =
                    Measured::Ok(vec![UndeliverableLine { event: SinkEvent::DeadLettered, undeliverable: 1 }])
            }),
        ),
        (
            "unbound connection",
            Box::new(|r| r.unbound = Measured::Ok(vec![UnboundLine { connection: "phone".into(), held: 0 }])),
        ),
        (
            "old queue",
            Box::new(|r| {
                r.pending = Measured::Ok(vec![PendingLine { key: key("b"), pending: 1, oldest_pending_seconds: 3601 }])
            }),
        ),
    ];
    for (name, change) in cases {
        let mut r = calm();
        change(&mut r);
        assert!(!r.is_quiet(3600), "{name} should make the digest not quiet");
        assert!(r.trouble(3600) >= 1, "{name}");
    }
}

#[test]
fn clocked_out_endpoints_and_deferred_work_alone_do_not_break_the_quiet() {
    let mut r = calm();
    r.deferred = Measured::Ok(vec![DeferredLine { key: key("b"), reason: "paused".into(), deferred: 4 }]);
    assert!(r.is_quiet(3600));
}

#[test]
fn a_queue_exactly_at_the_threshold_is_not_yet_old() {
    let mut r = calm();
    r.pending = Measured::Ok(vec![PendingLine { key: key("b"), pending: 1, oldest_pending_seconds: 3600 }]);
    assert!(r.is_quiet(3600));
}
