//! The `switchboard` binary.

use std::process::ExitCode;

use clap::Parser;
use switchboard::cli::database::Database;
use switchboard::cli::{Cli, Command, Output, admin, digest, print, print_error, serve};
use switchboard::store::Store;
use switchboard::store::signals::Emitter;
use switchboard::{db, telemetry};

/// The server allocates and frees many small JSON and HTTP objects per request;
/// glibc's allocator showed as a fifth of intake's CPU profile, mimalloc far less.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A failure as the CLI reports it: a stable code and a one-line message.
type Failure = (&'static str, String);

fn unavailable(e: impl std::fmt::Display) -> Failure {
    ("unavailable", e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    telemetry::init(&cli.settings.log, cli.settings.log_format);
    let json = cli.json;
    let database = match Database::open(&cli.settings) {
        Ok(d) => d,
        Err(e) => {
            print_error(json, "unavailable", &e.to_string());
            return ExitCode::FAILURE;
        }
    };
    let settings = cli.settings.clone();
    let outcome: Result<Option<Output>, Failure> = actix_web::rt::System::new().block_on(async {
        match cli.command {
            Command::Serve => {
                serve::run(&settings, &database.url, database.is_embedded()).await.map(|_| None).map_err(unavailable)
            }
            Command::Migrate => db::run_migrations(&database.url)
                .await
                .map(|applied| {
                    Some(Output {
                        text: format!("applied {} migration(s)", applied.len()),
                        json: serde_json::json!({"applied": applied}),
                    })
                })
                .map_err(unavailable),
            Command::Admin(cmd) => {
                db::run_migrations(&database.url).await.map_err(unavailable)?;
                let pool = db::pool(&database.url, 2).map_err(unavailable)?;
                let ctx = admin::Context::new(Store::new(pool, Emitter::none()), &settings);
                admin::run(&ctx, cmd).await.map(Some).map_err(|e| (e.code(), e.to_string()))
            }
            Command::Digest(cmd) => {
                db::run_migrations(&database.url).await.map_err(unavailable)?;
                let pool = db::pool(&database.url, 2).map_err(unavailable)?;
                let ctx = admin::Context::new(Store::new(pool, Emitter::none()), &settings);
                digest::run(&ctx, &settings, cmd).await.map(Some).map_err(|e| (e.code(), e.to_string()))
            }
        }
    });
    // Stops the embedded cluster, if this process started it, after the work is done.
    drop(database);
    match outcome {
        Ok(Some(out)) => {
            print(json, &out);
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err((code, message)) => {
            print_error(json, code, &message);
            ExitCode::FAILURE
        }
    }
}
