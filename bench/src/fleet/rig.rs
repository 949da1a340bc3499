//! A fleet on this machine: a run directory, its own PostgreSQL cluster, replicas of a
//! `switchboard` binary on one database and one master key, and nginx in front of
//! them. Started together, torn down together; the directory is kept when asked (a
//! failed run's logs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::balancer::Balancer;
use super::cluster::Cluster;
use super::replica::{Recipe, Replica, free_port, stop_all};
use crate::BenchResult;

/// The database the fleet serves.
pub const DATABASE: &str = "switchboard";

/// How a fleet is started.
pub struct Shape {
    /// The `switchboard` binary of the replicas.
    pub bin: PathBuf,
    /// Replicas started at once.
    pub replicas: usize,
    /// Settings beyond the common ones.
    pub extra: Vec<(&'static str, String)>,
    /// Whether nginx writes an access log (the fault run's, for reading after a
    /// failure; the throughput windows go without).
    pub access_log: bool,
    /// `max_connections` of the cluster.
    pub max_connections: u32,
}

/// The running fleet.
pub struct Rig {
    /// The run's directory (logs, the cluster, nginx's files).
    pub dir: PathBuf,
    /// The cluster.
    pub cluster: Arc<Cluster>,
    /// What every replica is started with.
    pub recipe: Recipe,
    /// The replicas, in the balancer's order.
    pub replicas: Vec<Replica>,
    /// nginx.
    pub balancer: Balancer,
}

/// Runs a blocking cluster step off the client thread, so agents keep asking while
/// PostgreSQL stops and starts.
pub async fn on_cluster(
    cluster: &Arc<Cluster>,
    step: impl FnOnce(&Cluster) -> BenchResult<()> + Send + 'static,
) -> BenchResult<()> {
    let cluster = cluster.clone();
    tokio::task::spawn_blocking(move || step(&cluster)).await.map_err(|e| format!("a cluster step panicked: {e}"))?
}

/// A fresh run directory under the system's temporary directory, which the cluster's
/// user (`postgres`, when the bench is root) may pass through.
fn run_dir() -> BenchResult<PathBuf> {
    let dir = std::env::temp_dir().join(format!("sb-fleet-{}-{:08x}", std::process::id(), rand::random::<u32>()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// A run directory with a started cluster, before any replica.
pub struct Ground {
    /// The run's directory.
    pub dir: PathBuf,
    /// The cluster, started.
    pub cluster: Arc<Cluster>,
}

impl Ground {
    /// A fresh run directory and a cluster in it, started.
    pub async fn prepare(max_connections: u32) -> BenchResult<Ground> {
        let dir = run_dir()?;
        crate::progress(&format!("fleet: run directory {}", dir.display()));
        let port = free_port()?;
        let d = dir.clone();
        let cluster = tokio::task::spawn_blocking(move || Cluster::init(&d, port, max_connections))
            .await
            .map_err(|e| format!("initdb panicked: {e}"))??;
        let cluster = Arc::new(cluster);
        on_cluster(&cluster, Cluster::start).await?;
        Ok(Ground { dir, cluster })
    }
}

impl Rig {
    /// Brings up the cluster with database [`DATABASE`], then the fleet on it.
    pub async fn start(shape: &Shape) -> BenchResult<Rig> {
        let ground = Ground::prepare(shape.max_connections).await?;
        let admin = testkit::db::connect(&ground.cluster.url("postgres")).await?;
        admin
            .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
            .await
            .map_err(|e| format!("creating the fleet's database: {e}"))?;
        let url = ground.cluster.url(DATABASE);
        Rig::start_on(ground, &url, shape).await
    }

    /// `shape.replicas` replicas on `database_url` started together (they migrate the
    /// database one at a time, under the advisory lock), then nginx in front of them
    /// once every one is ready.
    pub async fn start_on(ground: Ground, database_url: &str, shape: &Shape) -> BenchResult<Rig> {
        let Ground { dir, cluster } = ground;
        let balancer_port = free_port()?;
        let recipe = Recipe {
            database_url: database_url.to_owned(),
            secret_key: hex::encode(rand::random::<[u8; 32]>()),
            base_url: format!("http://127.0.0.1:{balancer_port}"),
            metrics_token: hex::encode(rand::random::<[u8; 32]>()),
            extra: shape.extra.clone(),
            log_dir: dir.clone(),
        };
        let mut replicas = Vec::new();
        for i in 0..shape.replicas {
            replicas.push(Replica::spawn(&format!("r{}", i + 1), &shape.bin, free_port()?, &recipe)?);
        }
        for r in &mut replicas {
            r.wait_ready(Duration::from_secs(120)).await?;
        }
        let ports: Vec<u16> = replicas.iter().map(Replica::port).collect();
        let balancer = Balancer::start(&dir, balancer_port, &ports, shape.access_log).await?;
        Ok(Rig { dir, cluster, recipe, replicas, balancer })
    }

    /// The database's URL.
    pub fn database_url(&self) -> String {
        self.recipe.database_url.clone()
    }

    /// A fresh connection to the database (the previous one may have died with a
    /// restart).
    pub async fn connect(&self) -> BenchResult<tokio_postgres::Client> {
        testkit::db::connect(&self.database_url()).await
    }

    /// Stops everything; removes the run directory unless `keep`.
    pub async fn stop(self, keep: bool) -> BenchResult<()> {
        let replicas = stop_all(self.replicas).await;
        let balancer = self.balancer.stop().await;
        let cluster = on_cluster(&self.cluster, Cluster::stop).await;
        if keep {
            crate::progress(&format!(
                "fleet: kept the run directory {} (logs of every replica, nginx, PostgreSQL)",
                self.dir.display()
            ));
        } else if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            crate::progress(&format!("fleet: could not remove {}: {e}", self.dir.display()));
        }
        replicas.and(balancer).and(cluster)
    }
}

/// The last lines of `path`, for an error message.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
