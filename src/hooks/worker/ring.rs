//! One ring: one announcement to one hook, up to three attempts, signed afresh each time. Before
//! every attempt the endpoint, the hook and its filter are re-checked, with the hook's
//! current secrets: before the first, by the dispatcher's match when that is current
//! (read from the database, or from the cache while the database keeps it coherent),
//! else here in the database; before each retry, here in the database. Inside the client's connector the target's
//! addresses are checked on every dial. The caller records the health.

use actix_web::web::Bytes;
use chrono::Utc;

use super::{Announcement, HookChannel};
use crate::domain::ids::HookId;
use crate::hooks::rules::health::HookHealthUpdate;
use crate::hooks::rules::health::health_after;
use crate::hooks::rules::hook::HookDisabledReason;
use crate::hooks::rules::retry::{ATTEMPT_TIMEOUT, AttemptClass, NextStep, after_attempt, unit_jitter};
use crate::hooks::rules::signing::{self, KeyRing, MessageId, SigningKey};
use crate::hooks::statements::HookTarget;
use crate::metrics::RingOutcome;
use crate::outbound::classify;

/// Most of a receiver's answer that is read (and discarded).
const RESPONSE_READ_LIMIT: usize = 64 * 1024;

/// How a ring ended, and the health it leaves (none when no attempt was made).
#[derive(Debug)]
pub(super) struct RingReport {
    /// Delivered, failed, or dropped (the hook went away or its secret is unusable).
    pub outcome: RingOutcome,
    /// What the last attempt says about the hook.
    pub health: Option<HookHealthUpdate>,
}

/// Rings the hook `first` describes with `n` and says how it ended. `first` is the
/// dispatcher's match; unless `first_is_current`, it is re-checked in the database
/// before the first attempt too (as before every retry).
pub(super) async fn ring(
    channel: HookChannel,
    client: awc::Client,
    first: HookTarget,
    first_is_current: bool,
    n: Announcement,
) -> RingReport {
    let dropped = RingReport { outcome: RingOutcome::Dropped, health: None };
    let hook = first.hook_id;
    // One message id for every attempt: receivers deduplicate on it.
    let msg_id = MessageId::new(Utc::now());
    let mut target = first;
    let mut current = first_is_current;
    let mut attempt = 1;
    loop {
        if !current {
            // The hook may have been deleted, disabled or re-filtered, its endpoint
            // revoked or expired, its secret rotated since it was matched or last tried.
            target = match channel.store.recheck_hook(hook, &n.queue).await {
                Ok(Some(target)) => target,
                Ok(None) => return dropped,
                Err(e) => {
                    tracing::warn!(hook = %hook, error = %e, "hook re-check failed; ring dropped");
                    return dropped;
                }
            };
        }
        let keys = match key_ring(&channel, &target) {
            Ok(keys) => keys,
            Err(reason) => {
                tracing::error!(hook = %hook, reason, "hook secret unusable; ring dropped");
                return dropped;
            }
        };
        // The URL rules (scheme, own host, ingest routes) again before every attempt:
        // the connector checks them only when it dials, and a kept-alive connection to
        // the same host skips that (a hook saved before a rule existed would pass).
        let class = match channel.guard.policy().target(&target.url) {
            Ok(_) => attempt_once(&client, &target.url, &msg_id, &n.body, &keys).await,
            Err(r) => crate::outbound::failure::TransportFailure::of_refusal(r).into(),
        };
        channel.metrics.attempt(class.metric_result());
        let jitter = unit_jitter(&mut rand::thread_rng());
        match after_attempt(attempt, class, jitter) {
            NextStep::Succeeded => {
                if let Some(reach) = &n.reach {
                    reach.delivered();
                }
                return RingReport { outcome: RingOutcome::Delivered, health: Some(health_after(class)) };
            }
            NextStep::GiveUp => {
                return RingReport { outcome: RingOutcome::Failed, health: Some(health_after(class)) };
            }
            NextStep::RetryAfter(wait) => {
                actix_rt::time::sleep(wait).await;
                attempt += 1;
                current = false;
            }
        }
    }
}

/// The hook's current secret, and the previous one while it still signs.
fn key_ring(channel: &HookChannel, target: &HookTarget) -> Result<KeyRing, &'static str> {
    let open = |sealed: &str| -> Result<SigningKey, &'static str> {
        let plain = channel.vault.open(sealed).map_err(|_| "the sealed secret does not open")?;
        let text = String::from_utf8(plain).map_err(|_| "the secret is not text")?;
        SigningKey::from_secret(&text).map_err(|_| "the secret is not a whsec_ key")
    };
    let current = open(&target.sealed_secret)?;
    let previous = match (&target.sealed_previous_secret, target.previous_valid_until) {
        (Some(sealed), Some(until)) => Some((open(sealed)?, until)),
        _ => None,
    };
    Ok(KeyRing::new(current, previous, Utc::now()))
}

/// One signed POST; its class. Redirects are not followed (the guarded client never
/// does); the answer's body is read up to a limit so the exchange completes cleanly.
async fn attempt_once(
    client: &awc::Client,
    url: &str,
    msg_id: &MessageId,
    body: &Bytes,
    keys: &KeyRing,
) -> AttemptClass {
    let mut request = client.post(url);
    for header in signing::headers(msg_id, Utc::now().timestamp(), body, keys) {
        request = request.insert_header(header);
    }
    match request.send_body(body.clone()).await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let read = response.body().limit(RESPONSE_READ_LIMIT);
            // The status decides; a slow or oversized answer body changes nothing.
            let _ = actix_rt::time::timeout(ATTEMPT_TIMEOUT, read).await;
            AttemptClass::from_status(status)
        }
        Err(e) => AttemptClass::from(classify(&e)),
    }
}

/// Writes a ring's health; counts and logs a hook this ring disabled.
pub(super) async fn record(channel: HookChannel, hook: HookId, update: HookHealthUpdate) {
    match channel.store.record_hook_outcome(hook, update).await {
        Ok(Some(true)) => {
            channel.metrics.hook_disabled(HookDisabledReason::ConsecutiveFailures);
            tracing::warn!(hook = %hook, "hook disabled after consecutive failed rings");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(hook = %hook, error = %e, "hook health not recorded"),
    }
}
