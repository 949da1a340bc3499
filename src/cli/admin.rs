//! `switchboard admin …`: bootstrap humans, teams, endpoints and webhooks from a shell.
//! These act as the instance operator, so they are not scoped to a caller.

use std::io::Read;

use clap::Subcommand;
use serde_json::json;

use super::Output;
use crate::agent_api::sink_dto::{SinkList, SinkView};
use crate::config::Settings;
use crate::domain::grants::Verb;
use crate::domain::ids::SinkId;
use crate::domain::todo_state::TeamRole;
use crate::error::{Error, Result};
use crate::http::dto::{CreatedWebhookView, WebhookList, WebhookView};
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::store::Store;
use crate::store::endpoints::VendEndpoint;
use crate::store::tenancy::OwnerRef;
use crate::store::webhooks::{NewWebhook, trusted_actors_json};
use crate::vault::Vault;

/// What admin commands work with: the store, the vault that seals webhook secrets, and
/// the public base URL that links (ingest URLs) are built on.
pub struct Context {
    /// The store.
    pub store: Store,
    /// Seals secrets under `SWITCHBOARD_SECRET_ENCRYPTION_KEY` (refuses without it).
    pub vault: Vault,
    /// The public base URL, without a trailing slash.
    pub base_url: String,
}

impl Context {
    /// The context for `store` under `settings`.
    pub fn new(store: Store, settings: &Settings) -> Self {
        Context { store, vault: Vault::new(settings.secret_encryption_key.as_ref()), base_url: settings.base_url() }
    }
}

/// Admin commands.
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a human (prints their first operator token once).
    CreateHuman {
        /// Email (unique, case-insensitive).
        #[arg(long)]
        email: String,
        /// Display name.
        #[arg(long)]
        name: String,
        /// Read a Board password from standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Set (or reset) a human's Board password, read from standard input; ends every
    /// Board session they have, so a reset after a leak locks the old sessions out.
    SetPassword {
        /// The human's email.
        #[arg(long)]
        email: String,
        /// Read the new password from standard input (required: a password never goes
        /// on a command line, where `ps` and shell history would keep it).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Create a team whose first admin is an existing human.
    CreateTeam {
        /// Team name (unique, case-insensitive).
        #[arg(long)]
        name: String,
        /// Email of the first admin.
        #[arg(long)]
        admin: String,
    },
    /// Vend an endpoint (prints its token once).
    VendEndpoint {
        /// Owner: a human's email or `team:<name>`.
        #[arg(long)]
        owner: String,
        /// Unique slug.
        #[arg(long)]
        slug: String,
        /// A granted verb; repeat for several (default: the drain family).
        #[arg(long = "grant", value_parser = parse_verb)]
        grants: Vec<Verb>,
        /// Default lease for claims that name none (60–86400 s).
        #[arg(long)]
        default_lease_seconds: Option<i32>,
    },
    /// Revoke an endpoint; its live todos become dead letters, silently.
    RevokeEndpoint {
        /// The endpoint's slug.
        #[arg(long)]
        slug: String,
    },
    /// Add a human to a team, or change their role in it.
    AddTeamMember {
        /// Team name.
        #[arg(long)]
        team: String,
        /// The human's email.
        #[arg(long)]
        email: String,
        /// `member` (uses the team's resources) or `admin` (configures them).
        #[arg(long, default_value = "member", value_parser = parse_role)]
        role: TeamRole,
    },
    /// Mint another operator token for a human (prints it once).
    MintOperatorToken {
        /// The human's email.
        #[arg(long)]
        email: String,
        /// A note saying what the token is for.
        #[arg(long, default_value = "minted from the CLI")]
        label: String,
    },
    /// Revoke every live operator token of a human.
    RevokeOperatorTokens {
        /// The human's email.
        #[arg(long)]
        email: String,
    },
    /// Create a webhook on an endpoint (prints its ingest URL, token and signing secret once).
    CreateWebhook {
        /// Slug of the endpoint whose queues receive its todos.
        #[arg(long)]
        endpoint: String,
        /// Provider scheme: github, gitea, stripe, standard or generic.
        #[arg(long, value_parser = parse_source)]
        source: SourceType,
        /// Default queue for deliveries no rule routes elsewhere.
        #[arg(long)]
        queue: String,
        /// Attempt cap of its todos (1–100; default 5).
        #[arg(long)]
        max_attempts: Option<i32>,
        /// A trusted sender login (GitHub/Gitea); repeat for several. None trusts no one.
        #[arg(long = "trusted-login", conflicts_with = "allow_all_actors")]
        trusted_logins: Vec<String>,
        /// Trust every sender.
        #[arg(long)]
        allow_all_actors: bool,
        /// Read the provider's signing secret from standard input (default: one is generated).
        #[arg(long)]
        secret_stdin: bool,
        /// A signed source that cannot sign: no secret; deliveries never ring or announce.
        #[arg(long)]
        unverified: bool,
    },
    /// List every webhook (never their credentials).
    ListWebhooks,
    /// List an owner's notification sinks (never a secret).
    ListSinks {
        /// The owner: a human's email or `team:<name>`.
        #[arg(long)]
        owner: String,
    },
    /// A sink's delivery log, newest first: sent, held, coalesced, partial, undeliverable.
    SinkDeliveries {
        /// The sink's id (`sk_…`).
        #[arg(long)]
        sink: String,
        /// Rows shown (1–500).
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
}

fn parse_role(raw: &str) -> std::result::Result<TeamRole, String> {
    raw.parse().map_err(|_| format!("unknown role {raw:?}; known: admin, member"))
}

fn parse_source(raw: &str) -> std::result::Result<SourceType, String> {
    raw.parse().map_err(|_| {
        let known: Vec<&str> = SourceType::ALL.iter().map(|s| s.as_str()).collect();
        format!("unknown source {raw:?}; known: {}", known.join(", "))
    })
}

fn parse_verb(raw: &str) -> std::result::Result<Verb, String> {
    raw.parse().map_err(|_| {
        let known: Vec<&str> = Verb::ALL.iter().map(|v| v.as_str()).collect();
        format!("unknown grant {raw:?}; known: {}", known.join(", "))
    })
}

pub use crate::domain::passwords::{PASSWORD_MIN_CHARS, hash_password};

/// Reads a secret from standard input, without its line ending.
fn read_stdin(field: &str) -> Result<String> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw).map_err(|_| Error::invalid(field, "could not read standard input"))?;
    Ok(raw.trim_end_matches(['\r', '\n']).to_owned())
}

impl AdminCommand {
    /// What the command looks up that may not exist, as its "not found" says it.
    fn looked_for(&self) -> String {
        match self {
            AdminCommand::RevokeEndpoint { slug } => format!("no endpoint with slug {slug:?}"),
            AdminCommand::CreateWebhook { endpoint, .. } => format!("no endpoint with slug {endpoint:?}"),
            AdminCommand::SinkDeliveries { sink, .. } => format!("no sink with id {sink:?}"),
            AdminCommand::VendEndpoint { owner, .. } | AdminCommand::ListSinks { owner } => {
                format!("no owner {owner:?}")
            }
            AdminCommand::SetPassword { email, .. }
            | AdminCommand::MintOperatorToken { email, .. }
            | AdminCommand::RevokeOperatorTokens { email } => format!("no human with email {email:?}"),
            AdminCommand::AddTeamMember { team, email, .. } => format!("no team {team:?} or human {email:?}"),
            AdminCommand::CreateTeam { admin, .. } => format!("no human with email {admin:?}"),
            AdminCommand::CreateHuman { .. } | AdminCommand::ListWebhooks => "not found".to_owned(),
        }
    }
}

/// Runs one admin command; a failure is its stable code and one line, a "not found"
/// naming what was looked for.
pub async fn run(ctx: &Context, cmd: AdminCommand) -> std::result::Result<Output, (&'static str, String)> {
    let looked_for = cmd.looked_for();
    dispatch(ctx, cmd).await.map_err(|e| match e {
        Error::NotFound => (e.code(), looked_for),
        e => (e.code(), e.to_string()),
    })
}

/// [`run`]'s work.
async fn dispatch(ctx: &Context, cmd: AdminCommand) -> Result<Output> {
    let store = &ctx.store;
    match cmd {
        AdminCommand::CreateHuman { email, name, password_stdin } => {
            create_human(store, &email, &name, password_stdin).await
        }
        AdminCommand::SetPassword { email, password_stdin } => set_password(store, &email, password_stdin).await,
        AdminCommand::CreateTeam { name, admin } => create_team(store, &name, &admin).await,
        AdminCommand::VendEndpoint { owner, slug, grants, default_lease_seconds } => {
            vend_endpoint(store, &owner, slug, grants, default_lease_seconds).await
        }
        AdminCommand::AddTeamMember { team, email, role } => add_team_member(store, &team, &email, role).await,
        AdminCommand::MintOperatorToken { email, label } => mint_operator_token(store, &email, &label).await,
        AdminCommand::RevokeOperatorTokens { email } => revoke_operator_tokens(store, &email).await,
        AdminCommand::RevokeEndpoint { slug } => revoke_endpoint(store, &slug).await,
        AdminCommand::CreateWebhook {
            endpoint,
            source,
            queue,
            max_attempts,
            trusted_logins,
            allow_all_actors,
            secret_stdin,
            unverified,
        } => {
            let trusted = trust_policy(trusted_logins, allow_all_actors);
            let request = WebhookRequest { source, queue, max_attempts, trusted, secret_stdin, unverified };
            create_webhook(ctx, &endpoint, request).await
        }
        AdminCommand::ListWebhooks => list_webhooks(store).await,
        AdminCommand::ListSinks { owner } => list_sinks(store, &owner).await,
        AdminCommand::SinkDeliveries { sink, limit } => sink_sends(store, &sink, limit).await,
    }
}

async fn create_human(store: &Store, email: &str, name: &str, password_stdin: bool) -> Result<Output> {
    let password_hash = if password_stdin { Some(hash_password(&read_stdin("password")?)?) } else { None };
    let h = store.create_human(email, name, password_hash).await?;
    Ok(Output {
        json: json!({"id": h.human.id, "email": h.human.email, "token": h.token}),
        text: format!("created human {} ({})\noperator token (shown once): {}", h.human.email, h.human.id, h.token),
    })
}

async fn set_password(store: &Store, email: &str, password_stdin: bool) -> Result<Output> {
    if !password_stdin {
        return Err(Error::invalid("password", "pass --password-stdin and write the password to standard input"));
    }
    let hash = hash_password(&read_stdin("password")?)?;
    let human = human(store, email).await?;
    let ended = store.set_password(human.id, &hash).await?;
    Ok(Output {
        json: json!({"id": human.id, "email": human.email, "sessions_ended": ended}),
        text: format!("password set for {}; {ended} Board session(s) ended", human.email),
    })
}

async fn create_team(store: &Store, name: &str, admin: &str) -> Result<Output> {
    let (id, name, _) = store.create_team(name, admin).await?;
    Ok(Output { json: json!({"id": id, "name": name}), text: format!("created team {name} ({id})") })
}

async fn vend_endpoint(
    store: &Store,
    owner: &str,
    slug: String,
    grants: Vec<Verb>,
    default_lease_seconds: Option<i32>,
) -> Result<Output> {
    let scope = store.resolve_owner(&OwnerRef::parse(owner)?).await?;
    let v = store.vend_endpoint(VendEndpoint { scope, slug, grants, default_lease_seconds, expires_at: None }).await?;
    let grants = v.endpoint.verbs();
    let names: Vec<&str> = grants.iter().map(|g| g.as_str()).collect();
    Ok(Output {
        json: json!({"id": v.endpoint.id, "slug": v.endpoint.slug, "token": v.token, "grants": grants}),
        text: format!(
            "vended endpoint {} ({})\ngrants: {}\nendpoint token (shown once): {}",
            v.endpoint.slug,
            v.endpoint.id,
            names.join(", "),
            v.token
        ),
    })
}

async fn add_team_member(store: &Store, team: &str, email: &str, role: TeamRole) -> Result<Output> {
    let team_id = store.team_by_name(team).await?.ok_or_else(|| Error::invalid("team", "no such team"))?;
    let human = human(store, email).await?;
    store.add_team_member(team_id, human.id, role).await?;
    Ok(Output {
        json: json!({"team": team_id, "email": human.email, "role": role}),
        text: format!("{} is now {role} of team {team}", human.email),
    })
}

async fn mint_operator_token(store: &Store, email: &str, label: &str) -> Result<Output> {
    let human = human(store, email).await?;
    let token = store.mint_operator_token(human.id, label).await?;
    Ok(Output {
        json: json!({"email": human.email, "token": token}),
        text: format!("operator token for {} (shown once): {token}", human.email),
    })
}

async fn revoke_operator_tokens(store: &Store, email: &str) -> Result<Output> {
    let human = human(store, email).await?;
    let revoked = store.revoke_operator_tokens(human.id, None).await?;
    Ok(Output {
        json: json!({"email": human.email, "revoked": revoked}),
        text: format!("revoked {revoked} operator token(s) of {}", human.email),
    })
}

async fn revoke_endpoint(store: &Store, slug: &str) -> Result<Output> {
    let endpoint = store.endpoint_by_slug(slug).await?;
    // Returns once every running instance forgot the token.
    let scope = [endpoint.scope_id];
    let revocation = store.revoke_endpoint(&scope, endpoint.id);
    let r = crate::service::auth::confirm::everywhere(store, endpoint.id, revocation).await?;
    Ok(Output {
        json: json!({"id": r.endpoint_id, "revoked": true, "dead_lettered": r.dead_lettered}),
        text: format!("revoked endpoint {slug}; {} live todos became dead letters", r.dead_lettered),
    })
}

/// Whom a new webhook trusts: everyone, the logins named, or (neither given) no one.
fn trust_policy(trusted_logins: Vec<String>, allow_all_actors: bool) -> Option<TrustedActors> {
    if allow_all_actors {
        Some(TrustedActors::AllowAll { allow_all: true })
    } else if !trusted_logins.is_empty() {
        Some(TrustedActors::Logins { logins: trusted_logins })
    } else {
        None
    }
}

/// What `create-webhook` asks for besides its endpoint.
struct WebhookRequest {
    source: SourceType,
    queue: String,
    max_attempts: Option<i32>,
    trusted: Option<TrustedActors>,
    secret_stdin: bool,
    unverified: bool,
}

async fn create_webhook(ctx: &Context, endpoint: &str, request: WebhookRequest) -> Result<Output> {
    let WebhookRequest { source, queue, max_attempts, trusted, secret_stdin, unverified } = request;
    let endpoint = ctx.store.endpoint_by_slug(endpoint).await?;
    let secret = if secret_stdin { Some(read_stdin("secret")?) } else { None };
    let created = ctx
        .store
        .create_webhook(
            &ctx.vault,
            NewWebhook {
                scope: endpoint.scope_id,
                endpoint_id: endpoint.id,
                source_type: source,
                queue,
                max_attempts,
                trusted_actors: trusted_actors_json(trusted.as_ref())?,
                secret,
                unverified,
            },
        )
        .await?;
    let view = CreatedWebhookView::new(created, &ctx.base_url);
    let mut text = format!(
        "created {source} webhook {} on endpoint {}\ningest URL (shown once): {}",
        view.id, endpoint.slug, view.ingest_url
    );
    if let Some(secret) = &view.signing_secret {
        text.push_str(&format!("\nsigning secret (shown once): {secret}"));
    }
    Ok(Output { json: to_json(&view)?, text })
}

async fn list_webhooks(store: &Store) -> Result<Output> {
    let rows = store.list_all_webhooks().await?;
    let list = WebhookList { webhooks: rows.iter().map(WebhookView::from).collect() };
    let lines: Vec<String> = list
        .webhooks
        .iter()
        .map(|w| {
            format!(
                "{} {} queue={} ingest token {}… refused={}",
                w.id, w.source_type, w.queue, w.ingest_token_prefix, w.refused_deliveries
            )
        })
        .collect();
    Ok(Output { json: to_json(&list)?, text: lines_or(lines, "no webhooks") })
}

async fn list_sinks(store: &Store, owner: &str) -> Result<Output> {
    let scope = store.resolve_owner(&OwnerRef::parse(owner)?).await?;
    let rows = store.list_sinks(&[scope]).await?;
    let list = SinkList { sinks: rows.into_iter().map(SinkView::from).collect() };
    let lines: Vec<String> = list
        .sinks
        .iter()
        .map(|k| {
            let state = if k.enabled { "enabled" } else { "disabled" };
            format!(
                "{} {} {} {} {state} budget {}/h burst {}",
                k.id, k.name, k.kind, k.base_url, k.budget_per_hour, k.burst
            )
        })
        .collect();
    Ok(Output { json: to_json(&list)?, text: lines_or(lines, "no sinks") })
}

async fn sink_sends(store: &Store, sink: &str, limit: i64) -> Result<Output> {
    let id: SinkId = sink.parse().map_err(|_| Error::NotFound)?;
    let dial = store.sink_dial(id).await?.ok_or(Error::NotFound)?;
    let rows = store.sink_sends(&[dial.scope_id], id, limit).await?;
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let subject = r.todo_id.map(|t| t.to_string()).or_else(|| r.endpoint_id.map(|e| e.to_string()));
            format!(
                "{} {} {} {} attempts={} count={}{}",
                r.created_at.to_rfc3339(),
                r.event,
                subject.unwrap_or_default(),
                r.status,
                r.attempts,
                r.count,
                r.last_error.as_deref().map(|e| format!(" last_error={e}")).unwrap_or_default()
            )
        })
        .collect();
    let json = serde_json::json!({"deliveries": rows.iter().map(|r| serde_json::json!({
        "id": r.id, "event": r.event, "todo_id": r.todo_id, "endpoint_id": r.endpoint_id, "status": r.status,
        "count": r.count, "attempts": r.attempts, "last_error": r.last_error,
        "created_at": r.created_at, "sent_at": r.sent_at,
    })).collect::<Vec<_>>()});
    Ok(Output { json, text: lines_or(lines, "no deliveries") })
}

/// One line each, or `none` when there are none.
fn lines_or(lines: Vec<String>, none: &str) -> String {
    if lines.is_empty() { none.to_owned() } else { lines.join("\n") }
}

fn to_json(value: &impl serde::Serialize) -> Result<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| Error::internal_from("json", e))
}

async fn human(store: &Store, email: &str) -> Result<crate::db::models::HumanRow> {
    store.human_by_email(email).await?.ok_or_else(|| Error::invalid("email", "no human with this email"))
}
