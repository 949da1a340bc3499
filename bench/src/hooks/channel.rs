//! The notify-hook channel built inside the bench process, from the library, the way
//! `startup.rs` builds the server's: a `Dispatcher` on an arbiter of its own
//! (`HookWorkers::start`) over a `HookChannel` with a store on the benchmark database,
//! a vault with the server's encryption key (so the secrets of hooks created through
//! the server's API open), an outbound guard with the server's policy (plain http,
//! 127.0.0.1/32 allowlisted, the server's own address refused), in-process metrics and
//! the server's lifted rate.
//!
//! The throughput measurement feeds it `TodoReady` signals through an emitter, as the
//! store does after a commit, so what it measures is the channel itself — matching,
//! per-hook rate state, re-check and signing, the guard at dial time, the POST and the
//! health write — without the cost of making each todo through intake.

use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU32;

use switchboard::config::CidrList;
use switchboard::db::listen::ListenerSession;
use switchboard::hooks::cache::HookCache;
use switchboard::hooks::worker::HookChannel;
use switchboard::metrics::Metrics;
use switchboard::outbound::{Guard, Policy};
use switchboard::startup::HookWorkers;
use switchboard::store::signals::Emitter;
use switchboard::vault::Vault;

use crate::BenchResult;
use crate::database::BenchDb;
use crate::machine;
use crate::scrape::NotifyCounts;
use crate::server::{NOTIFY_RATE_PER_MINUTE, Server};

/// The running channel. Dropping it stops its arbiter.
pub struct BenchChannel {
    _workers: HookWorkers,
    /// Keeps the hook cache coherent, as the server's listener session does.
    _listener: ListenerSession,
    feed: Emitter,
    metrics: Metrics,
    threads: Vec<u32>,
}

impl BenchChannel {
    /// Starts the dispatcher on a new arbiter; its store has `pool_size` connections
    /// (the server's dispatcher shares the server's pool of that size).
    pub fn start(db: &BenchDb, server: &Server, pool_size: u32) -> BenchResult<BenchChannel> {
        let key = server.secret_key();
        let allow = CidrList(vec![(IpAddr::V4(Ipv4Addr::LOCALHOST), 32)]);
        let guard = Guard::new(Policy::new(true, &allow, server.addr()))
            .map_err(|e| format!("building the outbound guard: {e}"))?;
        // The metrics read dropped signals from this emitter's count, which the feed
        // below shares (as the server's metrics share its store's emitter).
        let signals = Emitter::none();
        let metrics = Metrics::new(&signals);
        let channel = HookChannel {
            store: db.store(pool_size)?,
            vault: Vault::new(Some(&key)),
            guard,
            metrics: metrics.clone(),
            rate_per_minute: NonZeroU32::new(NOTIFY_RATE_PER_MINUTE).ok_or("the notify rate must be positive")?,
            cache: HookCache::default(),
        };
        // As in the server: the instance's listener session keeps the hook cache coherent.
        let listener = ListenerSession::start(
            &db.url,
            vec![switchboard::hooks::worker::subscription(&channel.cache, &metrics)],
            &metrics,
        );
        let before = machine::own_threads();
        let workers = HookWorkers::start(channel);
        // The arbiter's thread is running once `start` returns: it is the new one.
        let threads = machine::own_threads().into_iter().filter(|t| !before.contains(t)).collect();
        let feed = signals.and(workers.emitter());
        Ok(BenchChannel { _workers: workers, _listener: listener, feed, metrics, threads })
    }

    /// What the store would hold: an emitter sending to the dispatcher's mailbox
    /// (`try_send`; a full mailbox drops and counts).
    pub fn feed(&self) -> Emitter {
        self.feed.clone()
    }

    /// The channel's counters now (its own `/metrics` text, read in process).
    pub fn counts(&self) -> BenchResult<NotifyCounts> {
        let text = self.metrics.render().map_err(|e| format!("rendering the channel's metrics: {e}"))?;
        Ok(NotifyCounts::parse(&text))
    }

    /// The thread(s) the dispatcher and its supervisors run on.
    pub fn threads(&self) -> Vec<u32> {
        self.threads.clone()
    }
}
