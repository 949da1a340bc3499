//! `switchboard serve`: the server, plus a demo owner and endpoint on the embedded
//! database so a newcomer can try the API at once.

use crate::config::Settings;
use crate::domain::grants::{DRAIN_FAMILY, Verb};
use crate::error::Result;
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
    /// Endpoint token of the demo endpoint.
    pub endpoint_token: String,
}

/// Creates the demo owner and endpoint if missing, else rotates their tokens.
pub async fn seed_demo(store: &Store) -> Result<Demo> {
    let operator_token = match store.human_by_email(DEMO_EMAIL).await? {
        Some(h) => store.mint_operator_token(h.id, "demo (serve start)").await?,
        None => store.create_human(DEMO_EMAIL, "Demo Owner", None).await?.token,
    };
    let endpoint_token = match store.endpoint_by_slug(DEMO_SLUG).await {
        Ok(e) => store.rotate_endpoint_token(e.id).await?,
        Err(_) => {
            let human = store.human_by_email(DEMO_EMAIL).await?.ok_or(crate::error::Error::NotFound)?;
            let scope = store.reach_of(human.id).await?.personal;
            let mut grants = DRAIN_FAMILY.to_vec();
            grants.extend([Verb::CreateTodo, Verb::Interrupt]);
            store
                .vend_endpoint(VendEndpoint {
                    scope,
                    slug: DEMO_SLUG.into(),
                    grants,
                    default_lease_seconds: None,
                    expires_at: None,
                })
                .await?
                .token
        }
    };
    Ok(Demo { operator_token, endpoint_token })
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
             \n  open        {base}/api/openapi.json   (the API)  ·  {base}/readyz\n\
             \n  demo owner  {DEMO_EMAIL}\n  operator    {op}\n  endpoint    {DEMO_SLUG}\n  agent token {ep}\n\
             \n  try:  curl -s -X POST {base}/api/v1/agent/todos -H 'Authorization: Bearer {ep}' \
             -H 'content-type: application/json' -d '{{\"queue\":\"inbox\",\"title\":\"hello\"}}'\n\
             \x20       curl -s -X POST {base}/api/v1/agent/todos/claim-next -H 'Authorization: Bearer {ep}'\n",
            op = demo.operator_token,
            ep = demo.endpoint_token,
        );
    } else {
        println!("Switchboard is running at {base}");
    }
    tracing::info!(port = app.port(), "listening");
    app.run_until_stopped().await.map_err(|e| e.to_string())
}
