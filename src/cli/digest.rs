//! `switchboard digest preview --id D`: what a digest would say now, measured on the
//! configured database and sent nowhere (SPEC section 13).

use clap::Subcommand;
use serde_json::json;

use super::Output;
use super::admin::Context;
use crate::config::Settings;
use crate::digests::rules::render;
use crate::digests::service::compose::{DigestSettings, compose};
use crate::domain::ids::DigestId;
use crate::error::{Error, Result};

/// Digest commands.
#[derive(Debug, Subcommand)]
pub enum DigestCommand {
    /// Measure and print a digest as if it were sent now; sends nothing.
    Preview {
        /// The digest's id (`dg_…`).
        #[arg(long)]
        id: String,
    },
}

/// The digest settings `settings` names, for `base_url`.
pub fn digest_settings(settings: &Settings, base_url: &str) -> DigestSettings {
    DigestSettings {
        base_url: base_url.trim_end_matches('/').to_owned(),
        doorbell_ack_seconds: i64::from(settings.doorbell_ack_seconds),
        section_timeout_ms: settings.digest_section_timeout_ms,
    }
}

/// Runs one digest command; a failure is its stable code and one line, a "not found"
/// naming the digest looked for.
pub async fn run(
    ctx: &Context,
    settings: &Settings,
    cmd: DigestCommand,
) -> std::result::Result<Output, (&'static str, String)> {
    let DigestCommand::Preview { id } = &cmd;
    let looked_for = format!("no digest with id {id:?}");
    dispatch(ctx, settings, cmd).await.map_err(|e| match e {
        Error::NotFound => (e.code(), looked_for),
        e => (e.code(), e.to_string()),
    })
}

/// [`run`]'s work.
async fn dispatch(ctx: &Context, settings: &Settings, cmd: DigestCommand) -> Result<Output> {
    match cmd {
        DigestCommand::Preview { id } => {
            let id: DigestId = id.parse().map_err(|_| Error::NotFound)?;
            let d = ctx.store.digest_by_id(id).await?;
            let c = compose(&ctx.store, &d, &digest_settings(settings, &ctx.base_url), chrono::Utc::now()).await?;
            Ok(Output {
                json: json!({"text": c.body, "quiet": c.quiet, "title": c.title, "sections": render::sections(&c.report)}),
                text: format!("{}\n\n{}", c.title, c.body),
            })
        }
    }
}
