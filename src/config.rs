//! Every setting in one place. Each is an environment variable and a `--flag` of the
//! same name (the flag wins); the table below is the reference, and `switchboard
//! --help` prints the same.
//!
//! | variable | flag | default | meaning |
//! |---|---|---|---|
//! | `SWITCHBOARD_DATABASE_URL` | `--database-url` | unset: embedded | PostgreSQL URL or key=value string; unset brings up a private cluster under the data dir |
//! | `SWITCHBOARD_DIRECT_DATABASE_URL` | `--direct-database-url` | `SWITCHBOARD_DATABASE_URL` | PostgreSQL itself, for what needs a session of its own: the listener session (one LISTENing connection per instance) and the migration lock; set it when the database URL goes through a transaction pooler; needs `SWITCHBOARD_DATABASE_URL` |
//! | `SWITCHBOARD_DATA_DIR` | `--data-dir` | `./.switchboard` | where the embedded database lives, with its `demo.json` and `secret.key` |
//! | `SWITCHBOARD_PG_BIN_DIR` | `--pg-bin-dir` | auto | PostgreSQL server binaries for the embedded database |
//! | `SWITCHBOARD_ADDR` | `--addr` | `127.0.0.1:8080` | listen address |
//! | `SWITCHBOARD_BASE_URL` | `--base-url` | `http://<addr>` | public URL used in links |
//! | `SWITCHBOARD_SECRET_ENCRYPTION_KEY` | `--secret-encryption-key` | unset (embedded: `secret.key` in the data dir) | 32 bytes, base64 or hex; encrypts secrets at rest |
//! | `SWITCHBOARD_PUSH_ALLOW_HTTP` | `--push-allow-http` | `false` | allow plain-http outbound targets |
//! | `SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS` | `--notify-hook-allow-cidrs` | empty | comma-separated private ranges outbound calls may reach |
//! | `SWITCHBOARD_NOTIFY_HOOKS_ENABLED` | `--notify-hooks-enabled` | `true` | kill switch for notify hooks |
//! | `SWITCHBOARD_NOTIFY_HOOK_MAX` | `--notify-hook-max` | `5` | hooks per endpoint (0 disables hooks) |
//! | `SWITCHBOARD_NOTIFY_HOOK_RATE_PER_MINUTE` | `--notify-hook-rate-per-minute` | `120` | notifications per hook per minute (burst as large); more are dropped and counted |
//! | `SWITCHBOARD_METRICS_TOKEN` | `--metrics-token` | unset | bearer for `/metrics`, at least 32 bytes |
//! | `SWITCHBOARD_LEASE_REAPER_INTERVAL_MS` | `--lease-reaper-interval-ms` | `30000` | lease reaper period |
//! | `SWITCHBOARD_INTERRUPT_REAPER_INTERVAL_MS` | `--interrupt-reaper-interval-ms` | `30000` | interrupt reaper period |
//! | `SWITCHBOARD_RETRY_SCHEDULER_INTERVAL_MS` | `--retry-scheduler-interval-ms` | `5000` | retry scheduler period |
//! | `SWITCHBOARD_ENDPOINT_EXPIRY_INTERVAL_MS` | `--endpoint-expiry-interval-ms` | `30000` | endpoint expiry sweep period |
//! | `SWITCHBOARD_OUTBOX_POLL_MS` | `--outbox-poll-ms` | `2000` | outbox worker poll period |
//! | `SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS` | `--queue-census-interval-ms` | `10000` | how often the Queues overview's figures are measured (one instance at a time) |
//! | `SWITCHBOARD_DB_POOL_SIZE` | `--db-pool-size` | `16` | database connections per instance |
//! | `SWITCHBOARD_AUTH_CACHE_MS` | `--auth-cache-ms` | `2000` | how long a verified endpoint token is trusted without a lookup (0: never cached) |
//! | `SWITCHBOARD_WORKERS` | `--workers` | cores (half of them, at least one, with the database on this host) | HTTP worker threads |
//! | `SWITCHBOARD_LOG` | `--log` | `info` | log filter (tracing `EnvFilter` syntax) |
//! | `SWITCHBOARD_LOG_FORMAT` | `--log-format` | `text` | `text` or `json` |
//! | `SWITCHBOARD_RETENTION_DAYS` | `--retention-days` | `30` | done, canceled and dead-lettered todos (with their attempts) and unreferenced events older than this are deleted; `0` keeps everything (at most 36500) |
//! | `SWITCHBOARD_RETENTION_INTERVAL_MS` | `--retention-interval-ms` | `3600000` | retention pass period (the first pass runs within a minute of start-up) |
//! | `SWITCHBOARD_SINK_BUDGET_PER_HOUR` | `--sink-budget-per-hour` | `30` | a new sink's messages per hour |
//! | `SWITCHBOARD_SINK_BURST` | `--sink-burst` | `10` | a new sink's burst |
//! | `SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR` | `--sink-budget-max-per-hour` | `3600` | the most per hour any sink may set for itself (at most 3 600 000) |
//! | `SWITCHBOARD_SINK_BURST_MAX` | `--sink-burst-max` | `100` | the largest burst any sink may set for itself (at most 100 000) |
//! | `SWITCHBOARD_DOORBELL_ACK_SECONDS` | `--doorbell-ack-seconds` | `900` | a delivered `todo.ready` whose todo is not claimed within this is an unheard doorbell (60–21 600) |
//! | `SWITCHBOARD_DIGEST_INTERVAL_MS` | `--digest-interval-ms` | `30000` | how often the digest scheduler looks for due send times |
//! | `SWITCHBOARD_DIGEST_SECTION_TIMEOUT_MS` | `--digest-section-timeout-ms` | `5000` | each digest section's statement timeout; a slower section reads `unavailable` |
//! | `SWITCHBOARD_BODY_READ_TIMEOUT_MS` | `--body-read-timeout-ms` | `10000` | longest a request body may take to arrive once its headers have (408 after) |
//! | `SWITCHBOARD_MCP_MAX_SESSIONS` | `--mcp-max-sessions` | `1000` | MCP sessions (`/mcp/{slug}`, clients of the handshake revisions) open at once on this instance; an `initialize` past it answers 503 (1–100 000) |
//! | `SWITCHBOARD_MCP_MAX_SESSIONS_PER_ENDPOINT` | `--mcp-max-sessions-per-endpoint` | `32` | MCP sessions one endpoint may hold open at once on this instance; an `initialize` past it answers 429 (1–10 000) |
//! | `SWITCHBOARD_MCP_SESSION_IDLE_SECONDS` | `--mcp-session-idle-seconds` | `300` | an MCP session without a request for this long is closed (1–86 400) |
//! | `SWITCHBOARD_LONG_POLL_MAX_WAITERS` | `--long-poll-max-waiters` | `1000` | `claim-next` requests that may wait for work (`wait_seconds`) at once on this instance; past it a request answers at once (1–100 000) |
//! | `SWITCHBOARD_MCP_RESERVE_PERCENT` | `--mcp-reserve-percent` | `25` | share of this instance's MCP sessions kept for other owner scopes: one scope's endpoints hold at most the rest, past it `initialize` answers 429 (0–90; 0: no reserve) |
//! | `SWITCHBOARD_LONG_POLL_RESERVE_PERCENT` | `--long-poll-reserve-percent` | `25` | share of this instance's long-poll places kept for other owner scopes: one scope's endpoints hold at most the rest, past it a wait answers at once (0–90; 0: no reserve) |
//! | `SWITCHBOARD_TRUSTED_PROXIES` | `--trusted-proxies` | empty | comma-separated CIDRs or addresses of reverse proxies whose `X-Forwarded-For` is believed for the client address (sign-in limits, access log); empty trusts none (`domain::client_address`) |

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use base64::Engine;
use clap::builder::BoolishValueParser;

use crate::domain::trusted_proxies::TrustedProxies;

/// All runtime settings. The Debug form redacts the database URL (it may hold a
/// password) and the metrics token.
#[derive(Clone, clap::Args)]
pub struct Settings {
    /// PostgreSQL connection (URL or key=value); unset brings up the embedded database.
    #[arg(long, env = "SWITCHBOARD_DATABASE_URL", global = true, value_parser = parse_database_url, hide_env_values = true)]
    pub database_url: Option<String>,
    /// PostgreSQL itself, for what needs a session of its own (default: the database
    /// URL): the listener session, which LISTENs, and migrations, which hold a session
    /// advisory lock. Set it when the database URL goes through a transaction pooler.
    #[arg(long, env = "SWITCHBOARD_DIRECT_DATABASE_URL", global = true, value_parser = parse_direct_database_url, hide_env_values = true)]
    pub direct_database_url: Option<String>,
    /// Where the embedded database lives (with its demo.json and secret.key).
    #[arg(long, env = "SWITCHBOARD_DATA_DIR", global = true, default_value = ".switchboard")]
    pub data_dir: PathBuf,
    /// PostgreSQL server binaries for the embedded database (default: found automatically).
    #[arg(long, env = "SWITCHBOARD_PG_BIN_DIR", global = true)]
    pub pg_bin_dir: Option<PathBuf>,
    /// Listen address.
    #[arg(long, env = "SWITCHBOARD_ADDR", global = true, default_value = "127.0.0.1:8080", value_parser = parse_addr)]
    pub addr: SocketAddr,
    /// Public base URL used in links (default: `http://<addr>`).
    #[arg(long, env = "SWITCHBOARD_BASE_URL", global = true, value_parser = parse_base_url)]
    pub base_url: Option<String>,
    /// 32-byte key (base64 or hex) that encrypts secrets at rest (the embedded default
    /// keeps a generated one in its data dir when unset).
    #[arg(long, env = "SWITCHBOARD_SECRET_ENCRYPTION_KEY", global = true, value_parser = parse_key, hide_env_values = true)]
    pub secret_encryption_key: Option<SecretKey>,
    /// Allow plain-http outbound targets.
    #[arg(long, env = "SWITCHBOARD_PUSH_ALLOW_HTTP", global = true, default_value = "false", value_parser = BoolishValueParser::new(), action = clap::ArgAction::Set)]
    pub push_allow_http: bool,
    /// Comma-separated CIDRs or IPs that outbound calls may reach although private.
    #[arg(long, env = "SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", global = true, default_value = "", value_parser = parse_cidrs)]
    pub notify_hook_allow_cidrs: CidrList,
    /// Kill switch for notify hooks.
    #[arg(long, env = "SWITCHBOARD_NOTIFY_HOOKS_ENABLED", global = true, default_value = "true", value_parser = BoolishValueParser::new(), action = clap::ArgAction::Set)]
    pub notify_hooks_enabled: bool,
    /// Notify hooks per endpoint (0 disables hooks).
    #[arg(long, env = "SWITCHBOARD_NOTIFY_HOOK_MAX", global = true, default_value_t = 5)]
    pub notify_hook_max: u32,
    /// Notifications per hook per minute (also the burst); over it they are dropped.
    #[arg(long, env = "SWITCHBOARD_NOTIFY_HOOK_RATE_PER_MINUTE", global = true, default_value_t = std::num::NonZeroU32::MIN.saturating_add(119))]
    pub notify_hook_rate_per_minute: std::num::NonZeroU32,
    /// Bearer token for /metrics (at least 32 bytes).
    #[arg(long, env = "SWITCHBOARD_METRICS_TOKEN", global = true, value_parser = parse_metrics_token, hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Lease reaper period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_LEASE_REAPER_INTERVAL_MS", global = true, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub lease_reaper_interval_ms: u64,
    /// Interrupt reaper period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_INTERRUPT_REAPER_INTERVAL_MS", global = true, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub interrupt_reaper_interval_ms: u64,
    /// Retry scheduler period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_RETRY_SCHEDULER_INTERVAL_MS", global = true, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub retry_scheduler_interval_ms: u64,
    /// Endpoint expiry sweep period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_ENDPOINT_EXPIRY_INTERVAL_MS", global = true, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub endpoint_expiry_interval_ms: u64,
    /// Outbox worker poll period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_OUTBOX_POLL_MS", global = true, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub outbox_poll_ms: u64,
    /// How often the Queues overview's census is taken, in milliseconds.
    #[arg(long, env = "SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS", global = true, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub queue_census_interval_ms: u64,
    /// Database connections per instance.
    #[arg(long, env = "SWITCHBOARD_DB_POOL_SIZE", global = true, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_pool_size: u32,
    /// How long a verified endpoint token is trusted without a lookup, in ms (0: never).
    #[arg(long, env = "SWITCHBOARD_AUTH_CACHE_MS", global = true, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub auth_cache_ms: u64,
    /// HTTP worker threads (default: one per core; half the cores, at least one, when the
    /// database is on this host: `web::workers`).
    #[arg(long, env = "SWITCHBOARD_WORKERS", global = true, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: Option<u32>,
    /// Log filter (tracing EnvFilter syntax).
    #[arg(long, env = "SWITCHBOARD_LOG", global = true, default_value = "info", value_parser = parse_log_filter)]
    pub log: String,
    /// Log format.
    #[arg(long, env = "SWITCHBOARD_LOG_FORMAT", global = true, default_value = "text", value_enum)]
    pub log_format: LogFormat,
    /// Days after which history (done, canceled, dead letters, unreferenced events) is
    /// deleted; 0 keeps everything.
    #[arg(long, env = "SWITCHBOARD_RETENTION_DAYS", global = true, default_value_t = crate::domain::retention::DEFAULT_RETENTION_DAYS, value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::domain::retention::MAX_RETENTION_DAYS)))]
    pub retention_days: u32,
    /// Retention pass period in milliseconds.
    #[arg(long, env = "SWITCHBOARD_RETENTION_INTERVAL_MS", global = true, default_value_t = 3_600_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub retention_interval_ms: u64,
    /// Longest a request body may take to arrive after its headers, in ms (then 408).
    #[arg(long, env = "SWITCHBOARD_BODY_READ_TIMEOUT_MS", global = true, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub body_read_timeout_ms: u64,
    /// Messages a sink may send per hour (the token bucket's refill; a sink may lower
    /// or raise its own up to `SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR`).
    #[arg(long, env = "SWITCHBOARD_SINK_BUDGET_PER_HOUR", global = true, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3_600_000))]
    pub sink_budget_per_hour: u32,
    /// Messages a sink may send at once before its budget holds the rest (up to
    /// `SWITCHBOARD_SINK_BURST_MAX`).
    #[arg(long, env = "SWITCHBOARD_SINK_BURST", global = true, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub sink_burst: u32,
    /// The operator's bound on any sink's own budget per hour.
    #[arg(long, env = "SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR", global = true, default_value_t = 3_600, value_parser = clap::value_parser!(u32).range(1..=3_600_000))]
    pub sink_budget_max_per_hour: u32,
    /// The operator's bound on any sink's own burst.
    #[arg(long, env = "SWITCHBOARD_SINK_BURST_MAX", global = true, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub sink_burst_max: u32,
    /// Sinks per owner scope.
    #[arg(long, env = "SWITCHBOARD_SINK_MAX", global = true, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub sink_max: u32,
    /// Apprise URL schemes a stateless (`urls`) sink may use, comma-separated; empty:
    /// the default allow list (`notify::sinks::schemes::DEFAULT_ALLOWED`: services whose
    /// host Apprise fixes itself). Checked on save and before every send.
    #[arg(long, env = "SWITCHBOARD_APPRISE_ALLOWED_SCHEMES", global = true, default_value = "")]
    pub apprise_allowed_schemes: String,
    /// The outbox's first retry wait in ms (doubling after each failed attempt).
    #[arg(long, env = "SWITCHBOARD_OUTBOX_RETRY_BASE_MS", global = true, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(10..=86_400_000))]
    pub outbox_retry_base_ms: u64,
    /// A `todo.ready` doorbell whose todo is not claimed within this many seconds is
    /// unheard (reported by the digest).
    #[arg(long, env = "SWITCHBOARD_DOORBELL_ACK_SECONDS", global = true, default_value_t = 900, value_parser = clap::value_parser!(u32).range(60..=21_600))]
    pub doorbell_ack_seconds: u32,
    /// How often the digest scheduler looks for due send times, in ms.
    #[arg(long, env = "SWITCHBOARD_DIGEST_INTERVAL_MS", global = true, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub digest_interval_ms: u64,
    /// Each digest section's statement timeout, in ms (a section that takes longer is
    /// shown as unavailable).
    #[arg(long, env = "SWITCHBOARD_DIGEST_SECTION_TIMEOUT_MS", global = true, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub digest_section_timeout_ms: u64,
    /// Attempts per outbox row before it is recorded undeliverable.
    #[arg(long, env = "SWITCHBOARD_OUTBOX_MAX_ATTEMPTS", global = true, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub outbox_max_attempts: u32,
    /// `claim-next` requests that may wait for work at once on this instance (each holds
    /// a connection, nothing else); past it a request claims once and answers at once.
    #[arg(long, env = "SWITCHBOARD_LONG_POLL_MAX_WAITERS", global = true, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub long_poll_max_waiters: u32,
    /// MCP sessions open at once on this instance (a stateless client opens none).
    #[arg(long, env = "SWITCHBOARD_MCP_MAX_SESSIONS", global = true, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub mcp_max_sessions: u32,
    /// MCP sessions one endpoint may hold open at once on this instance.
    #[arg(long, env = "SWITCHBOARD_MCP_MAX_SESSIONS_PER_ENDPOINT", global = true, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub mcp_max_sessions_per_endpoint: u32,
    /// An MCP session without a request for this many seconds is closed.
    #[arg(long, env = "SWITCHBOARD_MCP_SESSION_IDLE_SECONDS", global = true, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub mcp_session_idle_seconds: u32,
    /// Share of this instance's MCP sessions, in percent, kept for other owner scopes than
    /// any one (`domain::fair_share`); 0: none.
    #[arg(long, env = "SWITCHBOARD_MCP_RESERVE_PERCENT", global = true, default_value_t = crate::domain::fair_share::DEFAULT_RESERVE_PERCENT, value_parser = clap::value_parser!(u8).range(0..=i64::from(crate::domain::fair_share::MAX_RESERVE_PERCENT)))]
    pub mcp_reserve_percent: u8,
    /// Share of this instance's long-poll places, in percent, kept for other owner scopes
    /// than any one (`domain::fair_share`); 0: none.
    #[arg(long, env = "SWITCHBOARD_LONG_POLL_RESERVE_PERCENT", global = true, default_value_t = crate::domain::fair_share::DEFAULT_RESERVE_PERCENT, value_parser = clap::value_parser!(u8).range(0..=i64::from(crate::domain::fair_share::MAX_RESERVE_PERCENT)))]
    pub long_poll_reserve_percent: u8,
    /// Reverse proxies (comma-separated CIDRs or addresses) whose `X-Forwarded-For` is
    /// believed for the client's address; empty: none, the TCP peer is the client.
    #[arg(long, env = "SWITCHBOARD_TRUSTED_PROXIES", global = true, default_value = "", value_parser = parse_trusted_proxies)]
    pub trusted_proxies: TrustedProxies,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |set: bool| if set { Some("[redacted]") } else { None };
        f.debug_struct("Settings")
            .field("database_url", &redacted(self.database_url.is_some()))
            .field("direct_database_url", &redacted(self.direct_database_url.is_some()))
            .field("data_dir", &self.data_dir)
            .field("pg_bin_dir", &self.pg_bin_dir)
            .field("addr", &self.addr)
            .field("base_url", &self.base_url)
            .field("secret_encryption_key", &self.secret_encryption_key)
            .field("push_allow_http", &self.push_allow_http)
            .field("notify_hook_allow_cidrs", &self.notify_hook_allow_cidrs)
            .field("notify_hooks_enabled", &self.notify_hooks_enabled)
            .field("notify_hook_max", &self.notify_hook_max)
            .field("notify_hook_rate_per_minute", &self.notify_hook_rate_per_minute)
            .field("metrics_token", &redacted(self.metrics_token.is_some()))
            .field("lease_reaper_interval_ms", &self.lease_reaper_interval_ms)
            .field("interrupt_reaper_interval_ms", &self.interrupt_reaper_interval_ms)
            .field("retry_scheduler_interval_ms", &self.retry_scheduler_interval_ms)
            .field("endpoint_expiry_interval_ms", &self.endpoint_expiry_interval_ms)
            .field("outbox_poll_ms", &self.outbox_poll_ms)
            .field("queue_census_interval_ms", &self.queue_census_interval_ms)
            .field("db_pool_size", &self.db_pool_size)
            .field("auth_cache_ms", &self.auth_cache_ms)
            .field("workers", &self.workers)
            .field("log", &self.log)
            .field("log_format", &self.log_format)
            .field("retention_days", &self.retention_days)
            .field("retention_interval_ms", &self.retention_interval_ms)
            .field("sink_budget_per_hour", &self.sink_budget_per_hour)
            .field("sink_burst", &self.sink_burst)
            .field("sink_budget_max_per_hour", &self.sink_budget_max_per_hour)
            .field("sink_burst_max", &self.sink_burst_max)
            .field("doorbell_ack_seconds", &self.doorbell_ack_seconds)
            .field("digest_interval_ms", &self.digest_interval_ms)
            .field("digest_section_timeout_ms", &self.digest_section_timeout_ms)
            .field("sink_max", &self.sink_max)
            .field("apprise_allowed_schemes", &self.apprise_allowed_schemes)
            .field("outbox_retry_base_ms", &self.outbox_retry_base_ms)
            .field("outbox_max_attempts", &self.outbox_max_attempts)
            .field("body_read_timeout_ms", &self.body_read_timeout_ms)
            .field("long_poll_max_waiters", &self.long_poll_max_waiters)
            .field("mcp_max_sessions", &self.mcp_max_sessions)
            .field("mcp_max_sessions_per_endpoint", &self.mcp_max_sessions_per_endpoint)
            .field("mcp_session_idle_seconds", &self.mcp_session_idle_seconds)
            .field("mcp_reserve_percent", &self.mcp_reserve_percent)
            .field("long_poll_reserve_percent", &self.long_poll_reserve_percent)
            .field("trusted_proxies", &self.trusted_proxies)
            .finish()
    }
}

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl Settings {
    /// Settings from the environment alone (no flags), as tests and tools build them.
    pub fn from_env() -> Result<Self, clap::Error> {
        #[derive(clap::Parser)]
        struct Only {
            #[command(flatten)]
            settings: Settings,
        }
        <Only as clap::Parser>::try_parse_from(["switchboard"]).map(|o| o.settings)
    }

    /// The public base URL, without a trailing slash.
    pub fn base_url(&self) -> String {
        self.base_url.clone().unwrap_or_else(|| format!("http://{}", self.addr))
    }

    /// Period of one of the sweeps.
    pub fn interval(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }
}

/// The secret encryption key (32 bytes). Its Debug form never shows the key.
#[derive(Clone)]
pub struct SecretKey(pub [u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// A parsed allowlist of address ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CidrList(pub Vec<(IpAddr, u8)>);

fn parse_database_url(raw: &str) -> Result<String, String> {
    parse_postgres_url("SWITCHBOARD_DATABASE_URL", raw)
}

fn parse_direct_database_url(raw: &str) -> Result<String, String> {
    parse_postgres_url("SWITCHBOARD_DIRECT_DATABASE_URL", raw)
}

/// Checks that the setting `name` holds a PostgreSQL URL or key=value string.
fn parse_postgres_url(name: &str, raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(format!("{name} is empty"));
    }
    tokio_postgres::Config::from_str(raw)
        .map(|_| raw.to_owned())
        // The parser's message never includes the password.
        .map_err(|e| format!("{name} is not a PostgreSQL URL: {e}"))
}

fn parse_addr(raw: &str) -> Result<SocketAddr, String> {
    raw.trim().parse().map_err(|_| format!("SWITCHBOARD_ADDR must be host:port with an IP host, got {raw:?}"))
}

fn parse_base_url(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim().trim_end_matches('/');
    let uri: actix_web::http::Uri = trimmed.parse().map_err(|e| format!("SWITCHBOARD_BASE_URL is not a URL: {e}"))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(h)) if !h.is_empty() => Ok(trimmed.to_owned()),
        _ => Err("SWITCHBOARD_BASE_URL must be an absolute http(s) URL".into()),
    }
}

fn parse_key(raw: &str) -> Result<SecretKey, String> {
    SecretKey::decode(raw)
        .ok_or_else(|| "SWITCHBOARD_SECRET_ENCRYPTION_KEY must decode (base64 or hex) to exactly 32 bytes".into())
}

impl SecretKey {
    /// A key written as base64 (any alphabet, padded or not) or hex, decoding to exactly
    /// 32 bytes; surrounding white space is ignored.
    pub fn decode(raw: &str) -> Option<SecretKey> {
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
        let raw = raw.trim();
        [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
            .iter()
            .filter_map(|e| e.decode(raw).ok())
            .chain(hex::decode(raw).ok())
            .find(|b| b.len() == 32)
            .and_then(|b| b.try_into().ok())
            .map(SecretKey)
    }
}

fn parse_log_filter(raw: &str) -> Result<String, String> {
    tracing_subscriber::EnvFilter::try_new(raw)
        .map(|_| raw.to_owned())
        .map_err(|e| format!("SWITCHBOARD_LOG is not a valid log filter: {e}"))
}

fn parse_metrics_token(raw: &str) -> Result<String, String> {
    let t = raw.trim();
    if t.len() < 32 || !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("SWITCHBOARD_METRICS_TOKEN must be at least 32 printable ASCII bytes without spaces".into());
    }
    Ok(t.to_owned())
}

fn parse_cidrs(raw: &str) -> Result<CidrList, String> {
    let mut out = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (ip, prefix) = match entry.split_once('/') {
            Some((ip, p)) => (ip, Some(p)),
            None => (entry, None),
        };
        let ip: IpAddr =
            ip.parse().map_err(|_| format!("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: {entry:?} is not an IP or CIDR"))?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max),
            None => Some(max),
        }
        .ok_or_else(|| format!("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: {entry:?} has a bad prefix length"))?;
        out.push((ip, prefix));
    }
    Ok(CidrList(out))
}

fn parse_trusted_proxies(raw: &str) -> Result<TrustedProxies, String> {
    TrustedProxies::parse(raw).map_err(|why| format!("SWITCHBOARD_TRUSTED_PROXIES: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings `args` give (flags only, beside whatever the environment holds).
    fn parse(args: &[&str]) -> Result<Only, clap::Error> {
        <Only as clap::Parser>::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
    }

    #[derive(clap::Parser)]
    struct Only {
        #[command(flatten)]
        settings: Settings,
    }

    #[test]
    fn the_debug_form_never_shows_the_database_url_or_tokens() {
        let mut s = Settings::from_env().unwrap();
        s.database_url = Some("postgres://u:hunter2@db/x".into());
        s.direct_database_url = Some("postgres://u:hunter3@db-direct/x".into());
        s.metrics_token = Some("m".repeat(40));
        s.secret_encryption_key = Some(SecretKey([7; 32]));
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("hunter3") && !shown.contains(&"m".repeat(40)),
            "{shown}"
        );
    }

    #[test]
    fn a_key_must_decode_to_32_bytes() {
        assert!(parse_key(&"ab".repeat(32)).is_ok());
        assert!(parse_key(&base64::engine::general_purpose::STANDARD.encode([7u8; 32])).is_ok());
        let err = parse_key("c2hvcnQ=").unwrap_err();
        assert!(err.contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"));
    }

    #[test]
    fn database_urls_are_checked_and_errors_name_the_setting() {
        assert!(parse_database_url("postgres://u:p@127.0.0.1:5432/db").is_ok());
        assert!(parse_database_url("host=/tmp user=x dbname=y").is_ok());
        let err = parse_database_url("postgres://u:p@h:notaport/db").unwrap_err();
        assert!(err.starts_with("SWITCHBOARD_DATABASE_URL"));
        let err = parse_direct_database_url("postgres://u:p@h:notaport/db").unwrap_err();
        assert!(err.starts_with("SWITCHBOARD_DIRECT_DATABASE_URL"), "{err}");
        assert!(!err.contains("u:p"), "{err}");
        assert_eq!(parse_direct_database_url(" ").unwrap_err(), "SWITCHBOARD_DIRECT_DATABASE_URL is empty");
    }

    #[test]
    fn allowlists_parse_ips_and_ranges() {
        let l = parse_cidrs("10.0.0.0/8, 127.0.0.1 ,fd00::/8").unwrap();
        assert_eq!(l.0.len(), 3);
        assert_eq!(l.0[1].1, 32);
        assert!(parse_cidrs("10.0.0.0/33").is_err());
        assert!(parse_cidrs("nope").is_err());
        assert_eq!(parse_cidrs("").unwrap(), CidrList::default());
    }

    #[test]
    fn retention_days_accept_zero_and_refuse_more_than_a_century() {
        let parse = |days: &str| parse(&["--retention-days", days]);
        assert_eq!(parse("0").unwrap().settings.retention_days, 0);
        assert_eq!(parse("36500").unwrap().settings.retention_days, 36_500);
        let err = parse("36501").err().unwrap().to_string();
        assert!(err.contains("--retention-days"), "{err}");
        assert!(parse("-1").is_err());
    }

    #[test]
    fn reserve_percents_default_to_a_quarter_and_refuse_more_than_ninety_naming_the_setting() {
        let defaults = parse(&[]).unwrap().settings;
        assert_eq!((defaults.mcp_reserve_percent, defaults.long_poll_reserve_percent), (25, 25));
        for flag in ["--mcp-reserve-percent", "--long-poll-reserve-percent"] {
            assert!(parse(&[flag, "0"]).is_ok());
            assert!(parse(&[flag, "90"]).is_ok());
            for bad in ["91", "100", "-1", "a quarter"] {
                let err = parse(&[&format!("{flag}={bad}")]).err().unwrap().to_string();
                assert!(err.contains(flag), "{flag} {bad}: {err}");
            }
        }
        let s = parse(&["--mcp-reserve-percent", "10", "--long-poll-reserve-percent", "50"]).unwrap().settings;
        assert_eq!((s.mcp_reserve_percent, s.long_poll_reserve_percent), (10, 50));
    }

    #[test]
    fn trusted_proxies_default_to_none_and_a_bad_entry_is_named_with_the_setting() {
        assert!(parse(&[]).unwrap().settings.trusted_proxies.is_empty());
        let set = parse(&["--trusted-proxies", "127.0.0.1, 10.0.0.0/8"]).unwrap().settings.trusted_proxies;
        assert!(set.trusts("10.9.8.7".parse().unwrap()) && !set.trusts("11.0.0.1".parse().unwrap()));
        let err = parse(&["--trusted-proxies", "127.0.0.1,proxy.internal"]).err().unwrap().to_string();
        assert!(err.contains("SWITCHBOARD_TRUSTED_PROXIES") && err.contains("\"proxy.internal\""), "{err}");
    }

    #[test]
    fn base_urls_must_be_absolute_http() {
        assert_eq!(parse_base_url("https://sb.example.com/").unwrap(), "https://sb.example.com");
        assert!(parse_base_url("sb.example.com").is_err());
        assert!(parse_base_url("ftp://x").is_err());
    }
}
