//! Sign-in attempt limits: per email and per client address, each a token bucket
//! (governor). Over either limit the attempt is refused before the password is checked,
//! so guessing costs the attacker time and the server no hashing.
//!
//! The client address is the TCP peer, or behind a proxy named in
//! `SWITCHBOARD_TRUSTED_PROXIES` the client its `X-Forwarded-For` names
//! (`web::client_address`); with no proxy trusted (the default) every client behind a
//! proxy shares the proxy's address, which is why the per-address bucket is roomier
//! than the per-email one. IPv6 clients are keyed by their /64, which one holder
//! typically controls whole.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Sign-in attempts per email per minute (also the burst).
pub const PER_EMAIL_PER_MINUTE: u32 = 10;

/// Sign-in attempts per client address per minute (also the burst).
pub const PER_ADDRESS_PER_MINUTE: u32 = 30;

/// Keys kept before stale buckets are swept (bounds memory against a flood of
/// distinct emails).
const SWEEP_ABOVE: usize = 10_000;

/// Longest email used as a key (longer ones share the bucket of their prefix).
const EMAIL_KEY_MAX: usize = 320;

/// The two buckets, shared by every worker.
#[derive(Clone)]
pub struct LoginLimits {
    per_email: Arc<DefaultKeyedRateLimiter<String>>,
    per_address: Arc<DefaultKeyedRateLimiter<IpAddr>>,
}

impl Default for LoginLimits {
    fn default() -> Self {
        Self::new(PER_EMAIL_PER_MINUTE, PER_ADDRESS_PER_MINUTE)
    }
}

fn per_minute(n: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
}

impl LoginLimits {
    /// Limits of `per_email` and `per_address` attempts a minute.
    pub fn new(per_email: u32, per_address: u32) -> Self {
        LoginLimits {
            per_email: Arc::new(RateLimiter::hashmap(per_minute(per_email))),
            per_address: Arc::new(RateLimiter::hashmap(per_minute(per_address))),
        }
    }

    /// Takes one attempt for `email` from `address`; `Err(wait)` when over either limit.
    pub fn attempt(&self, email: &str, address: Option<IpAddr>) -> Result<(), Duration> {
        let now = DefaultClock::default().now();
        if let Some(address) = address {
            self.per_address.check_key(&address_key(address)).map_err(|n| n.wait_time_from(now))?;
        }
        self.per_email.check_key(&email_key(email)).map_err(|n| n.wait_time_from(now))?;
        if self.per_email.len() > SWEEP_ABOVE {
            self.per_email.retain_recent();
        }
        if self.per_address.len() > SWEEP_ABOVE {
            self.per_address.retain_recent();
        }
        Ok(())
    }
}

fn email_key(email: &str) -> String {
    email.trim().chars().take(EMAIL_KEY_MAX).flat_map(char::to_lowercase).collect()
}

fn address_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn an_email_gets_its_quota_then_waits_whatever_its_case() {
        let limits = LoginLimits::new(3, 100);
        for _ in 0..3 {
            assert!(limits.attempt("Ada@Example.com", ip("192.0.2.1")).is_ok());
        }
        let wait = limits.attempt(" ada@example.com", ip("192.0.2.2")).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(60));
        assert!(limits.attempt("bob@example.com", ip("192.0.2.1")).is_ok(), "another email has its own bucket");
    }

    #[test]
    fn an_address_gets_its_quota_across_emails() {
        let limits = LoginLimits::new(100, 2);
        assert!(limits.attempt("a@example.com", ip("192.0.2.1")).is_ok());
        assert!(limits.attempt("b@example.com", ip("192.0.2.1")).is_ok());
        assert!(limits.attempt("c@example.com", ip("192.0.2.1")).is_err());
        assert!(limits.attempt("c@example.com", ip("192.0.2.9")).is_ok());
    }

    #[test]
    fn ipv6_clients_share_a_bucket_per_64_and_mapped_v4_is_v4() {
        assert_eq!(address_key("2001:db8:1:2:aaaa::1".parse().unwrap()), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        assert_eq!(address_key("::ffff:192.0.2.7".parse().unwrap()), "192.0.2.7".parse::<IpAddr>().unwrap());
    }
}
