//! The `switchboard` binary.

use std::process::ExitCode;

use clap::Parser;
use switchboard::cli::database::Database;
use switchboard::cli::{Cli, Command, admin, print, print_error, serve};
use switchboard::store::Store;
use switchboard::store::signals::Emitter;
use switchboard::{db, telemetry};

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
    let outcome = actix_web::rt::System::new().block_on(async move {
        match cli.command {
            Command::Serve => serve::run(&settings, &database.url, database.is_embedded()).await.map(|_| None),
            Command::Migrate => db::run_migrations(&database.url)
                .await
                .map(|applied| {
                    Some(switchboard::cli::Output {
                        text: format!("applied {} migration(s)", applied.len()),
                        json: serde_json::json!({"applied": applied}),
                    })
                })
                .map_err(|e| e.to_string()),
            Command::Admin(cmd) => {
                let run = async {
                    db::run_migrations(&database.url).await.map_err(|e| e.to_string())?;
                    let pool = db::pool(&database.url, 2).map_err(|e| e.to_string())?;
                    let store = Store::new(pool, Emitter::none());
                    admin::run(&store, cmd).await.map_err(|e| e.to_string())
                };
                run.await.map(Some)
            }
        }
        .map(|out| (out, database))
    });
    match outcome {
        Ok((Some(out), _database)) => {
            print(json, &out);
            ExitCode::SUCCESS
        }
        Ok((None, _database)) => ExitCode::SUCCESS,
        Err(message) => {
            print_error(json, "failed", &message);
            ExitCode::FAILURE
        }
    }
}
