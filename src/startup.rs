//! Builds the application: migrations, pool, store, actors, and the HTTP server bound to
//! its listener (port 0 in tests, so each test gets its own real server).

use std::net::{SocketAddr, TcpListener};

use actix::{Actor, Addr, Arbiter};
use actix_web::dev::Server;
use actix_web::middleware::{Condition, Logger};
use actix_web::{App, HttpServer, web};

use crate::actors::{
    EndpointExpirer, InterruptReaper, LeaseReaper, PreviousSecretExpirer, QuarantineExpirer, RetryScheduler,
};
use crate::config::Settings;
use crate::db;
use crate::db::listen::ListenerSession;
use crate::hooks::cache::HookCache;
use crate::hooks::settings::HookSettings;
use crate::hooks::worker::{Dispatcher, HookChannel};
use crate::metrics::Metrics;
use crate::outbound::{Guard, Lookup, SystemLookup};
use crate::service::auth::AuthCache;
use crate::service::long_poll::{Bell, ClaimWakeups, Waiters};
use crate::service::webhook_cache::WebhookCache;
use crate::service::{Parts, Services};
use crate::store::Store;
use crate::store::signals::Emitter;
use crate::web::body_read::ReadTimeout;
use crate::web::workers::default_workers;

/// Failure to start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// Database pool or migrations.
    #[error(transparent)]
    Db(#[from] db::DbSetupError),
    /// The outbound client's TLS configuration.
    #[error(transparent)]
    Outbound(#[from] crate::outbound::TlsSetupError),
    /// Settings that contradict each other.
    #[error("{0}")]
    Settings(String),
    /// Binding the listener or starting the server.
    #[error("could not listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The sweeping actors, kept alive for as long as the application runs.
pub struct Sweepers {
    /// Lease reaper.
    pub lease_reaper: Addr<LeaseReaper>,
    /// Interrupt reaper.
    pub interrupt_reaper: Addr<InterruptReaper>,
    /// Retry scheduler.
    pub retry_scheduler: Addr<RetryScheduler>,
    /// Endpoint expiry.
    pub endpoint_expirer: Addr<EndpointExpirer>,
    /// Quarantine expiry (hourly: it acts on a 30-day clock).
    pub quarantine_expirer: Addr<QuarantineExpirer>,
    /// Forgets previous hook secrets 24 h after a rotation (every 10 minutes).
    pub previous_secret_expirer: Addr<PreviousSecretExpirer>,
    /// Deletes expired Board sessions (hourly).
    pub board_session_expirer: Addr<crate::actors::BoardSessionExpirer>,
    /// Prunes history past `SWITCHBOARD_RETENTION_DAYS`; none when that is 0.
    pub retention: Option<Addr<crate::actors::Retention>>,
    /// Takes the Queues overview's census (`SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS`).
    pub queue_census: Addr<crate::queues::worker::CensusTaker>,
}

impl Sweepers {
    /// Starts every sweep on the intervals in `settings`. Must run inside an actix system.
    pub fn start(store: &Store, settings: &Settings) -> Self {
        Sweepers {
            lease_reaper: LeaseReaper::new(store.clone(), Settings::interval(settings.lease_reaper_interval_ms))
                .start(),
            interrupt_reaper: InterruptReaper::new(
                store.clone(),
                Settings::interval(settings.interrupt_reaper_interval_ms),
            )
            .start(),
            retry_scheduler: RetryScheduler::new(
                store.clone(),
                Settings::interval(settings.retry_scheduler_interval_ms),
            )
            .start(),
            endpoint_expirer: EndpointExpirer::new(
                store.clone(),
                Settings::interval(settings.endpoint_expiry_interval_ms),
            )
            .start(),
            quarantine_expirer: QuarantineExpirer::new(store.clone(), std::time::Duration::from_secs(3600)).start(),
            previous_secret_expirer: PreviousSecretExpirer::new(store.clone(), std::time::Duration::from_secs(600))
                .start(),
            board_session_expirer: crate::actors::BoardSessionExpirer::new(
                store.clone(),
                std::time::Duration::from_secs(3600),
            )
            .start(),
            retention: crate::domain::retention::max_age(settings.retention_days).map(|max_age| {
                crate::actors::Retention::new(
                    store.clone(),
                    Settings::interval(settings.retention_interval_ms),
                    max_age,
                )
                .start()
            }),
            queue_census: crate::queues::worker::CensusTaker::new(
                store.clone(),
                Settings::interval(settings.queue_census_interval_ms),
            )
            .start(),
        }
    }
}

/// A built application, listening but not yet serving.
pub struct Application {
    port: u16,
    server: Server,
    store: Store,
    metrics: Metrics,
    _sweepers: Sweepers,
    _hooks: Option<HookWorkers>,
    auth_cache: AuthCache,
    _listener: ListenerSession,
    _outbox: OutboxRunner,
    _digests: Addr<crate::digests::worker::DigestScheduler>,
    _binder: Addr<crate::sinks::worker::binder::ConnectionBinder>,
    waiters: Waiters,
    _claim_wakeups: ClaimWakeups,
    _reach: crate::sinks::worker::reach::ReachChecker,
}

/// Stops the server: waiting `claim-next` requests answer at once first, so that a
/// graceful stop is not held up by them.
#[derive(Clone)]
pub struct Stopper {
    handle: actix_web::dev::ServerHandle,
    waiters: Waiters,
}

impl Stopper {
    /// Answers every waiting request, refuses new waits, then stops the server
    /// (`graceful`: requests in flight finish first, up to the shutdown timeout).
    pub async fn stop(&self, graceful: bool) {
        self.waiters.close();
        self.handle.stop(graceful).await;
    }
}

/// The outbox worker on an arbiter of its own (its sends never share a thread with the
/// sweeps or the hooks' channel). Stopped with the application.
struct OutboxRunner {
    arbiter: Arbiter,
    worker: Addr<crate::sinks::worker::OutboxWorker>,
}

impl Drop for OutboxRunner {
    fn drop(&mut self) {
        self.arbiter.stop();
    }
}

/// The hook dispatcher (and the supervisors it starts) on an arbiter of its own:
/// outbound calls never share a thread with the sweeps. Stopped with the application.
pub struct HookWorkers {
    arbiter: Arbiter,
    dispatcher: Addr<Dispatcher>,
}

impl HookWorkers {
    /// Starts a dispatcher over `channel` on a new arbiter, its mailbox bounded from the
    /// first send and restarted after a panic behind the same address (the emitter's
    /// recipients stay valid).
    pub fn start(channel: HookChannel) -> Self {
        let arbiter = Arbiter::new();
        let dispatcher = crate::actors::restarting::start_in_arbiter(
            &arbiter.handle(),
            "hook dispatcher",
            crate::hooks::worker::DISPATCH_MAILBOX,
            move || Dispatcher::new(channel),
        );
        HookWorkers { arbiter, dispatcher }
    }

    /// An emitter sending the dispatcher what it may ring for ([`Emitter::to_hooks`]).
    pub fn emitter(&self) -> Emitter {
        Emitter::to_hooks(self.dispatcher.clone().recipient(), self.dispatcher.clone().recipient())
    }
}

impl Drop for HookWorkers {
    fn drop(&mut self) {
        self.arbiter.stop();
    }
}

impl Application {
    /// Migrates the database at `database_url`, builds the store emitting to `emitter`,
    /// starts the actors and binds `settings.addr`. Must run inside an actix system.
    pub async fn build(settings: &Settings, database_url: &str, emitter: Emitter) -> Result<Self, StartupError> {
        Self::build_with_lookup(settings, database_url, emitter, SystemLookup).await
    }

    /// [`Application::build`] with the outbound guard resolving names through `lookup`
    /// instead of the system resolver, both when a target is saved and at dial time.
    /// Only tests need this: a scripted answer is the one way to show a name that
    /// rebinds between the save-time check and the dial being refused.
    pub async fn build_with_lookup(
        settings: &Settings,
        database_url: &str,
        emitter: Emitter,
        lookup: impl Lookup,
    ) -> Result<Self, StartupError> {
        Self::build_inner(settings, database_url, emitter, lookup, None).await
    }

    /// [`Application::build`] on a listener bound earlier ([`bind`]), as `serve` does:
    /// it binds before any database work, so a taken port is said at once.
    pub async fn build_on(
        settings: &Settings,
        database_url: &str,
        emitter: Emitter,
        listener: TcpListener,
    ) -> Result<Self, StartupError> {
        Self::build_inner(settings, database_url, emitter, SystemLookup, Some(listener)).await
    }

    async fn build_inner(
        settings: &Settings,
        database_url: &str,
        emitter: Emitter,
        lookup: impl Lookup,
        listener: Option<TcpListener>,
    ) -> Result<Self, StartupError> {
        let sinks = crate::sinks::settings::SinkSettings::from_settings(settings).map_err(StartupError::Settings)?;
        // What needs a session of its own (the migration lock, LISTEN) may bypass a
        // transaction pooler the pool goes through.
        db::direct::migrate(database_url, settings.direct_database_url.as_deref()).await?;
        let direct_url = settings.direct_database_url.as_deref().unwrap_or(database_url);
        let pool = db::pool(database_url, settings.db_pool_size as usize)?;
        warn_unless_messages_in_english(&pool).await;
        let listener = match listener {
            Some(l) => l,
            None => bind(settings)?,
        };
        let port = listener
            .local_addr()
            .map_err(|source| StartupError::Listen { addr: settings.addr.to_string(), source })?
            .port();
        let vault = crate::vault::Vault::new(settings.secret_encryption_key.as_ref());
        // The guard refuses Switchboard's own address, which only the bound listener knows.
        let metrics = Metrics::new(&emitter);
        let guard = Guard::from_settings(settings, SocketAddr::new(settings.addr.ip(), port))?
            .with_lookup(lookup)
            .with_metrics(metrics.clone());
        let hook_cache = HookCache::default();
        let hooks = HookSettings::from_settings(settings);
        // Counts dead letters, and those that reached no hook and no sink.
        let reach = crate::sinks::worker::reach::DeadLetterReach::new(metrics.clone(), hooks.accepting());
        let hook_channel = HookChannel {
            // The dispatcher only reads hooks and writes their health: it never emits.
            store: Store::new(pool.clone(), Emitter::none()),
            vault: vault.clone(),
            guard: guard.clone(),
            metrics: metrics.clone(),
            rate_per_minute: settings.notify_hook_rate_per_minute,
            cache: hook_cache.clone(),
            reach: Some(reach.clone()),
        };
        let (emitter, hook_workers) = start_hooks(&hooks, hook_channel, emitter);
        // Every commit that may make work claimable rings the bell; the claim listener
        // wakes this instance's waiting requests (service::long_poll).
        let bell = Bell::new();
        let emitter = emitter.ringing(std::sync::Arc::new(bell.clone())).watching(std::sync::Arc::new(reach.clone()));
        let store = Store::new(pool, emitter);
        let reach = reach_checker(reach, &store, settings);
        // Before serving: connections an earlier release stored are bound (or held) and
        // fingerprints keyed, so no send of this instance pairs a secret with a sink's URL.
        crate::sinks::worker::binder::log_pass(store.bind_earlier_connections(&vault).await);
        let binder = crate::sinks::worker::binder::ConnectionBinder::new(store.clone(), vault.clone()).start();
        let waiters =
            Waiters::new(settings.long_poll_max_waiters as usize, settings.long_poll_reserve_percent, metrics.clone());
        let claim_wakeups = ClaimWakeups::start(&bell, &store);
        let sweepers = Sweepers::start(&store, settings);
        let base_url = match &settings.base_url {
            Some(b) => b.clone(),
            None => format!("http://{}:{port}", settings.addr.ip()),
        };
        let board = crate::board::BoardState::new(&base_url);
        let auth_cache = AuthCache::new(Settings::interval(settings.auth_cache_ms));
        let webhook_cache = WebhookCache::new(Settings::interval(settings.auth_cache_ms));
        let outbox = start_outbox(crate::sinks::worker::OutboxDeps {
            store: store.clone(),
            vault: vault.clone(),
            guard: guard.clone(),
            base_url: base_url.clone(),
            retry: crate::sinks::rules::outcome::RetryPolicy {
                base: Settings::interval(settings.outbox_retry_base_ms),
                max_attempts: settings.outbox_max_attempts,
            },
            poll: Settings::interval(settings.outbox_poll_ms),
            metrics: metrics.clone(),
            schemes: sinks.schemes.clone(),
        });
        // One session LISTENs for everything this instance follows (not one per concern).
        let mut subscriptions = vec![
            crate::service::auth::subscription(&auth_cache, &webhook_cache),
            crate::service::long_poll::subscription(&waiters),
            crate::sinks::worker::subscription(outbox.worker.clone()),
        ];
        if hook_workers.is_some() {
            subscriptions.push(crate::hooks::worker::subscription(&hook_cache, &metrics));
        }
        let listener_session = ListenerSession::start(direct_url, subscriptions, &metrics);
        let digest_settings = crate::cli::digest::digest_settings(settings, &base_url);
        let digests = crate::digests::worker::DigestScheduler::new(crate::digests::worker::DigestDeps {
            store: store.clone(),
            vault: vault.clone(),
            guard: guard.clone(),
            settings: digest_settings.clone(),
            interval: Settings::interval(settings.digest_interval_ms),
            metrics: metrics.clone(),
        })
        .start();
        let services = Services::new(Parts {
            store: store.clone(),
            auth_cache: auth_cache.clone(),
            webhook_cache,
            vault,
            base_url,
            metrics: metrics.clone(),
            metrics_token: settings.metrics_token.clone(),
            hooks,
            guard,
            hook_cache,
            sinks,
            digests: digest_settings,
            waiters: waiters.clone(),
        });
        // One MCP surface for every worker: its sessions are found from any of them.
        let mcp = crate::mcp::Mcp::new(crate::mcp::McpSettings::from_settings(settings));
        let surfaces = Surfaces {
            services,
            board,
            mcp,
            read_timeout: ReadTimeout(Settings::interval(settings.body_read_timeout_ms)),
        };
        let server = serve(settings, database_url, listener, surfaces, metrics.clone())?;
        Ok(Application {
            port,
            server,
            store,
            metrics,
            _sweepers: sweepers,
            _binder: binder,
            _hooks: hook_workers,
            auth_cache,
            _listener: listener_session,
            _outbox: outbox,
            _digests: digests,
            waiters,
            _claim_wakeups: claim_wakeups,
            _reach: reach,
        })
    }

    /// The hook dispatcher, when hooks are on (tests reach it through this).
    #[doc(hidden)]
    pub fn hook_dispatcher(&self) -> Option<Addr<Dispatcher>> {
        self._hooks.as_ref().map(|n| n.dispatcher.clone())
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The store the application uses.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The process's metrics (workers that count, such as the hook dispatcher,
    /// take a clone).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The verified-endpoint-token cache (whether its change listener is current).
    pub fn auth_cache(&self) -> &AuthCache {
        &self.auth_cache
    }

    /// A handle that can stop the server.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Stops the server after answering the requests that wait for work (a graceful
    /// stop through [`Application::handle`] would wait for them, up to the shutdown
    /// timeout, and then cut them off).
    pub fn stopper(&self) -> Stopper {
        Stopper { handle: self.server.handle(), waiters: self.waiters.clone() }
    }

    /// Serves until the server is stopped (SIGINT/SIGTERM or a handle). On SIGINT or
    /// SIGTERM (which actix-web stops on by itself) requests waiting for work answer at
    /// once rather than hold up the stop.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let Application { server, _sweepers, waiters, .. } = self;
        let on_signal = actix_rt::spawn(close_on_signal(waiters.clone()));
        let out = server.await;
        on_signal.abort();
        waiters.close();
        drop(_sweepers);
        out
    }
}

/// Answers every waiting `claim-next` request once the process is told to stop (SIGINT
/// or SIGTERM, which the HTTP server also hears and stops on).
async fn close_on_signal(waiters: Waiters) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        tracing::warn!("cannot watch for SIGTERM/SIGINT: waiting claim-next requests will hold up a graceful stop");
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    waiters.close();
}

/// Warns when PostgreSQL answers in a language other than English: lost connections and
/// prepared statements a migration changed are recognised by their message text, so
/// they would answer 500 instead of 503, and a connection whose prepared statements no
/// longer match the schema would not be dropped (README, "Upgrades and several
/// replicas").
async fn warn_unless_messages_in_english(pool: &db::DbPool) {
    let Ok(mut conn) = pool.get().await else {
        return;
    };
    if db::failure::messages_in_english(&mut conn).await == Some(false) {
        tracing::warn!(
            "PostgreSQL's messages are not in English (lc_messages): a lost database connection or a \
             migration that changes a table under a prepared statement will answer 500 instead of 503, \
             and such a connection stays in the pool; set lc_messages to 'C' or an English locale"
        );
    }
}

/// Binds the listening socket on `settings.addr` (port 0 picks a free port, which tests
/// use); a taken address is refused naming it.
pub fn bind(settings: &Settings) -> Result<TcpListener, StartupError> {
    TcpListener::bind(settings.addr).map_err(|source| StartupError::Listen { addr: settings.addr.to_string(), source })
}

/// What a bound listener answers while the database is still being readied: `/healthz`
/// 200, `/readyz` 503, anything else 503 `unavailable`. One worker, no signal handling
/// of its own; stopped once the application serves on the same socket.
pub struct Starting {
    handle: actix_web::dev::ServerHandle,
}

impl Starting {
    /// Serves `listener` (a duplicate of its socket; the listener itself stays for the
    /// application). Must run inside an actix system.
    pub fn serve(settings: &Settings, listener: &TcpListener) -> Result<Starting, StartupError> {
        let refused = |source| StartupError::Listen { addr: settings.addr.to_string(), source };
        let socket = listener.try_clone().map_err(refused)?;
        let server = HttpServer::new(|| App::new().configure(crate::http::health::starting_routes))
            .workers(1)
            .disable_signals()
            .shutdown_timeout(1)
            .listen(socket)
            .map_err(refused)?
            .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Ok(Starting { handle })
    }

    /// Stops answering (requests in flight are cut off: they only ever get a 503).
    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// Starts the hook dispatcher when hooks are on, and adds it to the emitter's
/// recipients; with hooks off, says so once and starts nothing.
fn start_hooks(hooks: &HookSettings, channel: HookChannel, emitter: Emitter) -> (Emitter, Option<HookWorkers>) {
    if hooks.accepting() {
        let workers = HookWorkers::start(channel);
        let emitter = emitter.and(workers.emitter());
        (emitter, Some(workers))
    } else {
        tracing::info!(
            "notify hooks are off (SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false or SWITCHBOARD_NOTIFY_HOOK_MAX=0): \
             no dispatcher started, hook creation refused"
        );
        (emitter, None)
    }
}

/// Starts looking up the sinks of dead letters no hook reached: as they arrive (at most
/// every poll of the outbox) and, while any is open, every five polls (between a
/// quarter second and half a minute).
fn reach_checker(
    reach: crate::sinks::worker::reach::DeadLetterReach,
    store: &Store,
    settings: &Settings,
) -> crate::sinks::worker::reach::ReachChecker {
    let poll = Settings::interval(settings.outbox_poll_ms);
    let recheck = (poll * 5).clamp(std::time::Duration::from_millis(250), std::time::Duration::from_secs(30));
    crate::sinks::worker::reach::ReachChecker::start(reach, store.clone(), recheck, poll.min(recheck))
}

/// Starts the outbox worker on an arbiter of its own: its sends never share a thread
/// with the sweeps or the hook dispatcher.
fn start_outbox(deps: crate::sinks::worker::OutboxDeps) -> OutboxRunner {
    let arbiter = Arbiter::new();
    let worker = crate::sinks::worker::OutboxWorker::start_in_arbiter(&arbiter.handle(), move |_| {
        crate::sinks::worker::OutboxWorker::new(deps)
    });
    OutboxRunner { arbiter, worker }
}

/// What the HTTP workers serve: the services, the Board's state, the MCP surface and
/// the body read timeout, each worker holding a clone.
struct Surfaces {
    services: Services,
    board: crate::board::BoardState,
    mcp: crate::mcp::Mcp,
    read_timeout: ReadTimeout,
}

/// The HTTP server over `listener`: the access log, the three surfaces side by side,
/// and the connection settings that long-poll and MCP streaming need.
fn serve(
    settings: &Settings,
    database_url: &str,
    listener: TcpListener,
    surfaces: Surfaces,
    watched: Metrics,
) -> Result<Server, StartupError> {
    let Surfaces { services, board, mcp, read_timeout } = surfaces;
    // actix's Logger renders its request fields (the route: a second match of the
    // path) for every request, whether or not the line is then logged; a server
    // whose filter drops the access log (`SWITCHBOARD_LOG=warn`) does not pay for it.
    let access_log = tracing::enabled!(target: "actix_web::middleware::logger", tracing::Level::INFO);
    let trusted_proxies = web::Data::new(settings.trusted_proxies.clone());
    let mut server = HttpServer::new(move || {
        let (watched, answered) = (watched.clone(), watched.clone());
        App::new()
            .wrap_fn(move |req, srv| crate::http::abandoned::watch(&watched, req, srv))
            // Every answer, by surface and status class (the alerts' 503 and 5xx rates).
            .wrap_fn(move |req, srv| crate::web::answers::count(&answered, req, srv))
            // Log the route pattern, never the concrete path: paths may carry ids
            // or (for intake) credentials. The client is the address behind trusted
            // proxies (`web::client_address`), never actix's `%{r}a`, which believes
            // forwarded headers from anyone.
            .wrap(Condition::new(
                access_log,
                Logger::new("%{route}xi %s %Dms client=%{client}xi")
                    .custom_request_replace("route", |req| {
                        format!("{} {}", req.method(), req.match_pattern().unwrap_or_else(|| "-".into()))
                    })
                    .custom_request_replace("client", |req| {
                        crate::web::client_address::client_address(req.request())
                            .map_or_else(|| "-".to_owned(), |a| a.to_string())
                    }),
            ))
            .app_data(trusted_proxies.clone())
            .app_data(web::Data::new(services.clone()))
            .app_data(web::Data::new(board.clone()))
            .app_data(web::Data::new(read_timeout))
            // The surfaces side by side; neither the API nor the Board knows the
            // other, and the MCP tools answer through the API's own answers.
            .configure(crate::http::routes)
            .configure(|cfg| mcp.routes(cfg))
            .configure(crate::board::routes)
            .default_service(web::to(crate::http::not_found))
    })
    .shutdown_timeout(10)
    // A client that closes its connection while its request is still being answered
    // (a long-poll claim-next waiting for work) ends the request at once: its future is
    // dropped and its place in line freed. By default a half-closed connection is
    // answered anyway, which would keep a gone client's place for its whole wait.
    // (Committing store calls finish on tasks of their own either way.)
    .h1_allow_half_closed(false)
    // A streamed answer (an MCP tool result as server-sent events) is written in more
    // than one piece; with Nagle's algorithm the second small write waits for the
    // client's delayed ACK (40 ms on Linux) before it leaves. Measured: an MCP
    // claim_next → complete cycle took 88 ms at p50 with it, against 20 ms over REST.
    .tcp_nodelay(true);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let workers = settings.workers.map_or_else(|| default_workers(cores, database_url), |w| w as usize);
    server = server.workers(workers);
    let server = server
        .listen(listener)
        .map_err(|source| StartupError::Listen { addr: settings.addr.to_string(), source })?
        .run();
    Ok(server)
}
