use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::*;

const ALL_FAILURES: [AttemptClass; 5] = [
    AttemptClass::Timeout,
    AttemptClass::Network,
    AttemptClass::Tls,
    AttemptClass::RejectedSsrf,
    AttemptClass::ForbiddenTarget,
];

#[test]
fn statuses_fall_into_their_classes() {
    assert_eq!(AttemptClass::from_status(200), AttemptClass::Success(200));
    assert_eq!(AttemptClass::from_status(204), AttemptClass::Success(204));
    assert_eq!(AttemptClass::from_status(301), AttemptClass::Redirect(301));
    assert_eq!(AttemptClass::from_status(308), AttemptClass::Redirect(308));
    assert_eq!(AttemptClass::from_status(400), AttemptClass::ClientError(400));
    assert_eq!(AttemptClass::from_status(404), AttemptClass::ClientError(404));
    assert_eq!(AttemptClass::from_status(408), AttemptClass::RetryableStatus(408));
    assert_eq!(AttemptClass::from_status(429), AttemptClass::RetryableStatus(429));
    assert_eq!(AttemptClass::from_status(500), AttemptClass::RetryableStatus(500));
    assert_eq!(AttemptClass::from_status(503), AttemptClass::RetryableStatus(503));
    assert_eq!(AttemptClass::from_status(101), AttemptClass::Network);
    assert_eq!(AttemptClass::from_status(600), AttemptClass::Network);
}

#[test]
fn network_timeout_tls_408_429_and_5xx_are_retried_the_rest_is_not() {
    for status in [408, 429, 500, 502, 503, 599] {
        assert!(AttemptClass::from_status(status).retryable(), "{status}");
    }
    for status in [200, 301, 302, 400, 401, 403, 404, 410, 422] {
        assert!(!AttemptClass::from_status(status).retryable(), "{status}");
    }
    assert!(AttemptClass::Timeout.retryable());
    assert!(AttemptClass::Network.retryable());
    assert!(AttemptClass::Tls.retryable());
    assert!(!AttemptClass::RejectedSsrf.retryable());
    assert!(!AttemptClass::ForbiddenTarget.retryable());
}

#[test]
fn last_error_names_the_status_class_or_the_failure() {
    let last = |c: AttemptClass| c.last_error().map(LastError::as_str);
    assert_eq!(last(AttemptClass::Success(200)), None);
    assert_eq!(last(AttemptClass::Redirect(302)), Some("redirect"));
    assert_eq!(last(AttemptClass::ClientError(404)), Some("client_error"));
    assert_eq!(last(AttemptClass::RetryableStatus(429)), Some("client_error"));
    assert_eq!(last(AttemptClass::RetryableStatus(408)), Some("client_error"));
    assert_eq!(last(AttemptClass::RetryableStatus(502)), Some("server_error"));
    assert_eq!(last(AttemptClass::Timeout), Some("timeout"));
    assert_eq!(last(AttemptClass::Network), Some("network"));
    assert_eq!(last(AttemptClass::Tls), Some("tls"));
    assert_eq!(last(AttemptClass::RejectedSsrf), Some("rejected_ssrf"));
    assert_eq!(last(AttemptClass::ForbiddenTarget), Some("forbidden_target"));
    assert_eq!(LastError::ALL.len(), 8);
}

#[test]
fn the_metrics_label_is_the_status_class_or_the_failure() {
    let label = |c: AttemptClass| c.metric_result().as_str();
    assert_eq!(label(AttemptClass::Success(201)), "2xx");
    assert_eq!(label(AttemptClass::Redirect(307)), "3xx");
    assert_eq!(label(AttemptClass::ClientError(403)), "4xx");
    assert_eq!(label(AttemptClass::RetryableStatus(429)), "4xx");
    assert_eq!(label(AttemptClass::RetryableStatus(500)), "5xx");
    assert_eq!(label(AttemptClass::Timeout), "timeout");
    assert_eq!(label(AttemptClass::Network), "network");
    assert_eq!(label(AttemptClass::Tls), "tls");
    assert_eq!(label(AttemptClass::RejectedSsrf), "rejected_ssrf");
    assert_eq!(label(AttemptClass::ForbiddenTarget), "forbidden_target");
    let all: Vec<&str> = AttemptResult::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(all, ["2xx", "3xx", "4xx", "5xx", "timeout", "network", "tls", "rejected_ssrf", "forbidden_target"]);
}

#[test]
fn only_answers_carry_a_status() {
    assert_eq!(AttemptClass::from_status(503).status(), Some(503));
    assert_eq!(AttemptClass::Redirect(301).status(), Some(301));
    for class in ALL_FAILURES {
        assert_eq!(class.status(), None);
    }
}

#[test]
fn waits_are_one_then_five_seconds_without_jitter() {
    assert_eq!(wait_before(1, 0.0), None);
    assert_eq!(wait_before(2, 0.0), Some(Duration::from_secs(1)));
    assert_eq!(wait_before(3, 0.0), Some(Duration::from_secs(5)));
    assert_eq!(wait_before(4, 0.0), None);
    assert_eq!(wait_before(0, 0.0), None);
    assert_eq!(BASE_WAITS.len() as u32, MAX_ATTEMPTS - 1);
}

#[test]
fn jitter_moves_a_wait_by_at_most_a_fifth() {
    assert_eq!(wait_before(2, 1.0), Some(Duration::from_millis(1200)));
    assert_eq!(wait_before(2, -1.0), Some(Duration::from_millis(800)));
    assert_eq!(wait_before(3, 0.5), Some(Duration::from_millis(5500)));
    assert_eq!(wait_before(3, 7.0), Some(Duration::from_secs(6)), "clamped");
    assert_eq!(wait_before(3, f64::NAN), Some(Duration::from_secs(5)));
}

#[test]
fn a_successful_attempt_ends_the_ring_at_any_attempt() {
    for attempt in 1..=MAX_ATTEMPTS {
        assert_eq!(after_attempt(attempt, AttemptClass::Success(200), 0.0), NextStep::Succeeded);
    }
}

#[test]
fn retryable_failures_are_tried_three_times_in_all() {
    let class = AttemptClass::RetryableStatus(503);
    assert_eq!(after_attempt(1, class, 0.0), NextStep::RetryAfter(Duration::from_secs(1)));
    assert_eq!(after_attempt(2, class, 0.0), NextStep::RetryAfter(Duration::from_secs(5)));
    assert_eq!(after_attempt(3, class, 0.0), NextStep::GiveUp);
    assert_eq!(after_attempt(1, AttemptClass::Timeout, -1.0), NextStep::RetryAfter(Duration::from_millis(800)));
}

#[test]
fn final_failures_give_up_at_once() {
    for class in [AttemptClass::Redirect(302), AttemptClass::ClientError(400), AttemptClass::RejectedSsrf] {
        assert_eq!(after_attempt(1, class, 0.0), NextStep::GiveUp, "{class:?}");
    }
}

#[test]
fn injected_randomness_makes_jitter_reproducible() {
    let draws = |seed| {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..4).map(|_| unit_jitter(&mut rng)).collect::<Vec<_>>()
    };
    assert_eq!(draws(7), draws(7));
    assert_ne!(draws(7), draws(8));
}

proptest! {
    #[test]
    fn every_jittered_wait_stays_within_twenty_percent(seed in any::<u64>(), attempt in 2u32..=3) {
        let j = unit_jitter(&mut StdRng::seed_from_u64(seed));
        prop_assert!((-1.0..=1.0).contains(&j));
        let base = BASE_WAITS[(attempt - 2) as usize].as_secs_f64();
        let wait = wait_before(attempt, j).unwrap().as_secs_f64();
        prop_assert!(wait >= base * 0.8 - 1e-9 && wait <= base * 1.2 + 1e-9);
    }

    #[test]
    fn every_status_has_exactly_one_sensible_reading(status in 100u16..1000) {
        let class = AttemptClass::from_status(status);
        prop_assert_eq!(class.succeeded(), (200..300).contains(&status));
        prop_assert_eq!(class.last_error().is_none(), class.succeeded());
        prop_assert!(!(class.succeeded() && class.retryable()));
    }
}
