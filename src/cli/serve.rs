//! `switchboard serve`: the server, plus a demo owner and endpoint on the embedded
//! database so a newcomer can try the API at once.

use std::path::Path;

use rand::Rng;
use rand::distributions::Alphanumeric;

use super::database::Database;
use super::kept::{DEMO_FILE, KEY_FILE, KeySource, read_demo, write_demo};
use crate::config::Settings;
use crate::domain::grants::{DRAIN_FAMILY, Verb};
use crate::domain::ids::ScopeId;
use crate::domain::passwords::{hash_password, verify_password};
use crate::domain::todo_state::EndpointState;
use crate::error::{Error, Result};
use crate::startup::{Application, Starting, bind};
use crate::store::Store;
use crate::store::endpoints::VendEndpoint;
use crate::store::signals::Emitter;

/// Email of the demo owner seeded on the embedded database.
pub const DEMO_EMAIL: &str = "demo@switchboard.local";
/// Slug of the demo endpoint.
pub const DEMO_SLUG: &str = "demo";

/// The demo credentials: kept in the data dir (`demo.json`) and reused at every start
/// while they still sign in, because only their hashes are in the database and a
/// newcomer's scripts, MCP client and Board session should survive a restart.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Demo {
    /// Operator token of the demo owner.
    pub operator_token: String,
    /// Slug of the demo endpoint.
    pub endpoint_slug: String,
    /// Endpoint token of the demo endpoint.
    pub endpoint_token: String,
    /// The demo owner's Board password.
    pub board_password: String,
}

/// Characters of the demo's Board password.
const DEMO_PASSWORD_CHARS: usize = 20;

/// Label of the operator tokens minted for the demo.
const DEMO_TOKEN_LABEL: &str = "demo (serve start)";

/// The options of `serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Rotate the embedded default's demo credentials (new operator and agent tokens,
    /// new Board password, Board sessions ended) instead of reusing the kept ones.
    #[arg(long)]
    pub reset_demo: bool,
}

/// The demo owner and endpoint with their credentials. With `kept` (the data dir's
/// `demo.json`) and no `reset`, the credentials kept there are reused as long as all of
/// them still sign in; otherwise (and always without `kept`) the owner and endpoint are
/// created if missing and their tokens and password rotated (the previous demo operator
/// tokens are revoked, so they do not pile up), and the new ones kept. Instances seeding
/// at once take turns; a later one finds what the earlier one kept.
pub async fn seed_demo(store: &Store, kept: Option<&Path>, reset: bool) -> std::result::Result<Demo, String> {
    use diesel_async::RunQueryDsl;
    let failed = |e: Error| format!("could not seed the demo: {e}");
    // The lock lives on a connection taken out of the pool: however seeding ends, closing
    // that connection releases it, and no pooled connection is left holding it.
    let mut lock = deadpool::managed::Object::take(store.conn().await.map_err(failed)?);
    crate::db::advisory::LOCK
        .query()
        .bind::<diesel::sql_types::BigInt, _>(crate::db::advisory::DEMO_SEED)
        .execute(&mut lock)
        .await
        .map_err(|e| failed(e.into()))?;
    let demo = seed_demo_in_turn(store, kept, reset).await;
    let _ = crate::db::advisory::UNLOCK
        .query()
        .bind::<diesel::sql_types::BigInt, _>(crate::db::advisory::DEMO_SEED)
        .execute(&mut lock)
        .await;
    demo
}

/// [`seed_demo`]'s work, with the seeding lock held.
async fn seed_demo_in_turn(store: &Store, kept: Option<&Path>, reset: bool) -> std::result::Result<Demo, String> {
    let failed = |e: Error| format!("could not seed the demo: {e}");
    if let (Some(path), false) = (kept, reset)
        && let Some(demo) = read_demo::<Demo>(path).map_err(|e| e.to_string())?
    {
        if still_signs_in(store, &demo).await.map_err(failed)? {
            return Ok(demo);
        }
        tracing::info!(path = %path.display(), "the kept demo credentials no longer sign in; minting new ones");
    }
    let demo = rotate_demo(store).await.map_err(failed)?;
    if let Some(path) = kept {
        write_demo(path, &demo).map_err(|e| e.to_string())?;
    }
    Ok(demo)
}

/// Whether every kept credential still works: the operator token of the demo owner, the
/// agent token of the named endpoint, and the Board password.
async fn still_signs_in(store: &Store, demo: &Demo) -> Result<bool> {
    let Some(human) = store.human_by_email(DEMO_EMAIL).await? else {
        return Ok(false);
    };
    let operator = store.authenticate_operator(&demo.operator_token).await?;
    if operator.is_none_or(|reach| reach.human != human.id) {
        return Ok(false);
    }
    let endpoint = store.authenticate_endpoint(&demo.endpoint_token).await?;
    if endpoint.is_none_or(|p| p.slug != demo.endpoint_slug) {
        return Ok(false);
    }
    let facts = store.login_facts(DEMO_EMAIL).await?;
    Ok(facts.is_some_and(|f| verify_password(f.password_hash.as_deref(), &demo.board_password)))
}

/// Creates the demo owner and endpoint if missing, else rotates their credentials.
async fn rotate_demo(store: &Store) -> Result<Demo> {
    let (human, operator_token) = match store.human_by_email(DEMO_EMAIL).await? {
        Some(h) => {
            // Every token of the demo owner is a demo token: only the newest stays live.
            store.revoke_operator_tokens(h.id, None).await?;
            (h.id, store.mint_operator_token(h.id, DEMO_TOKEN_LABEL).await?)
        }
        None => {
            let created = store.create_human(DEMO_EMAIL, "Demo Owner", None).await?;
            (created.human.id, created.token)
        }
    };
    let board_password: String =
        rand::thread_rng().sample_iter(&Alphanumeric).take(DEMO_PASSWORD_CHARS).map(char::from).collect();
    store.set_password(human, &hash_password(&board_password)?).await?;
    let scope = store.reach_of(human).await?.personal;
    let (endpoint_slug, endpoint_token) = demo_endpoint(store, scope).await?;
    Ok(Demo { operator_token, endpoint_slug, endpoint_token, board_password })
}

/// The demo owner's live demo endpoint with a fresh token: `demo`, or `demo-2`, … when
/// an earlier one was revoked (a revoked endpoint stays, as the record of its cascade).
async fn demo_endpoint(store: &Store, scope: ScopeId) -> Result<(String, String)> {
    for n in 1..=100 {
        let slug = if n == 1 { DEMO_SLUG.to_owned() } else { format!("{DEMO_SLUG}-{n}") };
        match store.endpoint_by_slug(&slug).await {
            Ok(e) if e.scope_id == scope && e.state == EndpointState::Active => {
                return Ok((slug, store.rotate_endpoint_token(scope, e.id).await?));
            }
            // Revoked, or somebody else's slug: try the next one.
            Ok(_) => continue,
            Err(Error::NotFound) => {
                let mut grants = DRAIN_FAMILY.to_vec();
                grants.extend([Verb::CreateTodo, Verb::Interrupt]);
                let vended = store
                    .vend_endpoint(VendEndpoint {
                        scope,
                        slug: slug.clone(),
                        grants,
                        default_lease_seconds: None,
                        expires_at: None,
                    })
                    .await?;
                return Ok((slug, vended.token));
            }
            Err(e) => return Err(e),
        }
    }
    Err(Error::Conflict("no free demo endpoint slug".into()))
}

/// Serves until SIGINT/SIGTERM: binds the listen address first (a taken port is said
/// before any database work), answers `/readyz` 503 while the database is readied,
/// then serves the application and, on the embedded default, prints the demo. Under
/// systemd (`Type=notify`) it says `READY=1` once its own `/readyz` answers 200.
pub async fn run(settings: &Settings, args: &ServeArgs) -> std::result::Result<(), String> {
    if args.reset_demo && settings.database_url.is_some() {
        return Err("--reset-demo rotates the embedded default's demo credentials, and SWITCHBOARD_DATABASE_URL is \
                    set: there is no demo to reset (manage tokens with `switchboard admin`)"
            .into());
    }
    let listener = bind(settings).map_err(|e| e.to_string())?;
    // Before the database: a kept key file that is exposed or corrupt stops start-up now.
    check_kept_key(settings)?;
    let starting = Starting::serve(settings, &listener).map_err(|e| e.to_string())?;
    let opening = settings.clone();
    let database = actix_web::rt::task::spawn_blocking(move || Database::open(&opening, true))
        .await
        .map_err(|e| format!("could not open the database: {e}"))?
        .map_err(|e| e.to_string())?;
    let mut settings = settings.clone();
    let key = database.key(&settings).map_err(|e| e.to_string())?;
    if let Some((key, source)) = &key {
        if database.is_embedded() {
            // The check reads the stored secrets, so the schema must be there first (the
            // application's own migration run then finds nothing to do).
            crate::db::run_migrations(&database.url).await.map_err(|e| e.to_string())?;
            database.check_key(key, source).await.map_err(|e| e.to_string())?;
        }
        settings.secret_encryption_key = Some(key.clone());
    }
    let app =
        Application::build_on(&settings, &database.url, Emitter::none(), listener).await.map_err(|e| e.to_string())?;
    starting.stop().await;
    let base = settings.base_url.clone().unwrap_or_else(|| format!("http://{}:{}", settings.addr.ip(), app.port()));
    if let Some(dir) = database.data_dir() {
        let demo = seed_demo(app.store(), Some(&dir.join(DEMO_FILE)), args.reset_demo).await?;
        print_demo(&base, &demo, dir, key.as_ref().map(|(_, source)| source));
    } else {
        println!("Switchboard is running at {base}");
    }
    if super::ready::wanted() {
        let own = super::ready::own_address(std::net::SocketAddr::new(settings.addr.ip(), app.port()));
        actix_web::rt::spawn(super::ready::notify_when_ready(own));
    }
    tracing::info!(port = app.port(), "listening");
    let served = app.run_until_stopped().await.map_err(|e| e.to_string());
    // Stops the embedded cluster, if this process started it, after the server.
    drop(database);
    served
}

/// Refuses, before any database work, an existing key file of the embedded default that
/// cannot be used (the variable, when set, wins and the file is not read).
fn check_kept_key(settings: &Settings) -> std::result::Result<(), String> {
    if settings.database_url.is_some() || settings.secret_encryption_key.is_some() {
        return Ok(());
    }
    let dir = std::path::absolute(&settings.data_dir).unwrap_or_else(|_| settings.data_dir.clone());
    super::kept::existing_key(&dir.join(KEY_FILE)).map(|_| ()).map_err(|e| e.to_string())
}

/// The embedded default's front door, printed to the terminal on purpose (never logged).
fn print_demo(base: &str, demo: &Demo, dir: &Path, key: Option<&KeySource>) {
    let kept = dir.join(DEMO_FILE);
    let key_line = match key {
        Some(KeySource::File(path)) => format!(
            "{}   (seals webhook, hook and connection secrets; a production deployment sets \
             SWITCHBOARD_SECRET_ENCRYPTION_KEY itself)",
            path.display()
        ),
        Some(KeySource::Variable) => {
            "SWITCHBOARD_SECRET_ENCRYPTION_KEY   (seals webhook, hook and connection secrets)".to_owned()
        }
        None => "none: secrets are refused".to_owned(),
    };
    println!(
        "\nSwitchboard is running at {base}\n\
         \n  open        {base}/login   (the Board)  ·  {base}/api/openapi.json   (the API)\n\
         \n  demo owner  {DEMO_EMAIL}\n  password    {pw}\n  operator    {op}\n  endpoint    {slug}\n  agent token {ep}\n\
         \x20 mcp         {mcp}   (MCP over Streamable HTTP, bearer: the agent token)\n\
         \n  kept in     {kept}   (owner-only; the same at every start; `serve --reset-demo` rotates them)\n\
         \x20 master key  {key_line}\n\
         \n  try:  curl -s -X POST {base}/api/v1/agent/todos -H 'Authorization: Bearer {ep}' \
         -H 'content-type: application/json' -d '{{\"queue\":\"inbox\",\"title\":\"hello\"}}'\n\
         \x20       curl -s -X POST {base}/api/v1/agent/todos/claim-next -H 'Authorization: Bearer {ep}'\n\
         \x20       claude mcp add --transport http switchboard {mcp} --header 'Authorization: Bearer {ep}'\n",
        pw = demo.board_password,
        op = demo.operator_token,
        slug = demo.endpoint_slug,
        ep = demo.endpoint_token,
        kept = kept.display(),
        mcp = crate::mcp::url(base, &demo.endpoint_slug),
    );
}
