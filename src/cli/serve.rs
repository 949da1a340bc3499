//! `switchboard serve`: the server, plus a demo owner and endpoint on the embedded
//! database so a newcomer can try the API at once.

use rand::Rng;
use rand::distributions::Alphanumeric;

use crate::config::Settings;
use crate::domain::grants::{DRAIN_FAMILY, Verb};
use crate::domain::ids::ScopeId;
use crate::domain::passwords::hash_password;
use crate::domain::todo_state::EndpointState;
use crate::error::{Error, Result};
use crate::startup::Application;
use crate::store::Store;
use crate::store::endpoints::VendEndpoint;
use crate::store::signals::Emitter;

/// Email of the demo owner seeded on the embedded database.
pub const DEMO_EMAIL: &str = "demo@switchboard.local";
/// Slug of the demo endpoint.
pub const DEMO_SLUG: &str = "demo";

/// Fresh demo credentials (the tokens are rotated on each start, because only their
/// hashes are kept and a newcomer needs to see them).
pub struct Demo {
    /// Operator token of the demo owner.
    pub operator_token: String,
    /// Slug of the demo endpoint.
    pub endpoint_slug: String,
    /// Endpoint token of the demo endpoint.
    pub endpoint_token: String,
    /// The demo owner's Board password (new on each start; earlier Board sessions end).
    pub board_password: String,
}

/// Characters of the demo's Board password.
const DEMO_PASSWORD_CHARS: usize = 20;

/// Label of the operator tokens minted for the demo at each start.
const DEMO_TOKEN_LABEL: &str = "demo (serve start)";

/// Creates the demo owner and endpoint if missing, else rotates their tokens (the
/// previous demo operator tokens are revoked, so they do not pile up). Instances seeding
/// at once take turns (the last one's tokens are the live ones).
pub async fn seed_demo(store: &Store) -> Result<Demo> {
    use diesel_async::RunQueryDsl;
    // The lock lives on a connection taken out of the pool: however seeding ends, closing
    // that connection releases it, and no pooled connection is left holding it.
    let mut lock = deadpool::managed::Object::take(store.conn().await?);
    crate::db::advisory::LOCK
        .query()
        .bind::<diesel::sql_types::BigInt, _>(crate::db::advisory::DEMO_SEED)
        .execute(&mut lock)
        .await?;
    let demo = seed_demo_in_turn(store).await;
    let _ = crate::db::advisory::UNLOCK
        .query()
        .bind::<diesel::sql_types::BigInt, _>(crate::db::advisory::DEMO_SEED)
        .execute(&mut lock)
        .await;
    demo
}

/// [`seed_demo`]'s work, with the seeding lock held.
async fn seed_demo_in_turn(store: &Store) -> Result<Demo> {
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

/// Serves until SIGINT/SIGTERM.
pub async fn run(settings: &Settings, database_url: &str, embedded: bool) -> std::result::Result<(), String> {
    let app = Application::build(settings, database_url, Emitter::none()).await.map_err(|e| e.to_string())?;
    let base = settings.base_url.clone().unwrap_or_else(|| format!("http://{}:{}", settings.addr.ip(), app.port()));
    if embedded {
        let demo = seed_demo(app.store()).await.map_err(|e| format!("could not seed the demo: {e}"))?;
        // Printed to the terminal on purpose (never logged): this is the demo's front door.
        println!(
            "\nSwitchboard is running at {base}\n\
             \n  open        {base}/login   (the Board)  ·  {base}/api/openapi.json   (the API)\n\
             \n  demo owner  {DEMO_EMAIL}\n  password    {pw}\n  operator    {op}\n  endpoint    {slug}\n  agent token {ep}\n\
             \x20 mcp         {mcp}   (MCP over Streamable HTTP, bearer: the agent token)\n\
             \n  try:  curl -s -X POST {base}/api/v1/agent/todos -H 'Authorization: Bearer {ep}' \
             -H 'content-type: application/json' -d '{{\"queue\":\"inbox\",\"title\":\"hello\"}}'\n\
             \x20       curl -s -X POST {base}/api/v1/agent/todos/claim-next -H 'Authorization: Bearer {ep}'\n\
             \x20       claude mcp add --transport http switchboard {mcp} --header 'Authorization: Bearer {ep}'\n",
            pw = demo.board_password,
            op = demo.operator_token,
            slug = demo.endpoint_slug,
            ep = demo.endpoint_token,
            mcp = crate::mcp::url(&base, &demo.endpoint_slug),
        );
    } else {
        println!("Switchboard is running at {base}");
    }
    tracing::info!(port = app.port(), "listening");
    app.run_until_stopped().await.map_err(|e| e.to_string())
}
