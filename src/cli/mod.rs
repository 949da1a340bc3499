//! The command line: `serve`, `migrate`, `admin …` and `digest preview`. Every command accepts `--json`
//! and then prints exactly one JSON object on stdout (logs go to stderr).

pub mod admin;
pub mod database;
pub mod digest;
pub mod kept;
pub mod ready;
pub mod serve;
pub mod setting_files;

use clap::{Parser, Subcommand};
use serde_json::Value;

use crate::config::Settings;

/// Switchboard: webhooks in, work for agents out; dead letters never die silently.
#[derive(Debug, Parser)]
#[command(name = "switchboard", version, about)]
pub struct Cli {
    /// Print exactly one JSON object on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Settings (each also an environment variable).
    #[command(flatten)]
    pub settings: Settings,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (brings up the embedded database when no URL is configured).
    Serve(serve::ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate,
    /// Bootstrap tenancy: humans, teams, endpoints.
    #[command(subcommand)]
    Admin(admin::AdminCommand),
    /// Queue digests: preview one.
    #[command(subcommand)]
    Digest(digest::DigestCommand),
}

/// A command's outcome: what to print on success.
pub struct Output {
    /// The JSON object (printed with `--json`).
    pub json: Value,
    /// The human-readable text (printed otherwise).
    pub text: String,
}

/// Prints an outcome the way the caller asked for.
pub fn print(json_mode: bool, out: &Output) {
    if json_mode {
        println!("{}", out.json);
    } else {
        println!("{}", out.text);
    }
}

/// Prints a failure: one line on stderr, and with `--json` one error object on stdout.
pub fn print_error(json_mode: bool, code: &str, message: &str) {
    if json_mode {
        println!("{}", serde_json::json!({"error": {"code": code, "message": message}}));
    }
    eprintln!("switchboard: {message}");
}
