//! The `switchboard` binary.

use std::process::ExitCode;

use switchboard::cli::database::{Database, DatabaseError};
use switchboard::cli::kept::KeySource;
use switchboard::cli::{Cli, Command, Output, admin, digest, print, print_error, serve, setting_files};
use switchboard::config::Settings;
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
    // Settings may come from files (`SWITCHBOARD_X_FILE`); one that cannot be read stops
    // here, before anything else happens.
    let cli = match setting_files::parse::<Cli>() {
        Ok(cli) => cli,
        Err(e) => {
            print_error(std::env::args_os().any(|a| a == "--json"), "invalid_argument", &e.to_string());
            return ExitCode::FAILURE;
        }
    };
    telemetry::init(&cli.settings.log, cli.settings.log_format);
    let json = cli.json;
    let system = actix_web::rt::System::new();
    let outcome: Result<Option<Output>, Failure> = match cli.command {
        // `serve` binds its address before it opens (or creates) the database.
        Command::Serve(args) => system.block_on(serve::run(&cli.settings, &args)).map(|()| None).map_err(unavailable),
        command => match open(&cli.settings) {
            Ok((database, settings, source)) => {
                let outcome = system.block_on(run(command, &settings, &database, source));
                // Stops the embedded cluster, if this process started it, after the work.
                drop(database);
                outcome
            }
            Err(e) => Err(unavailable(e)),
        },
    };
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

/// The database a command other than `serve` uses (never created here), the settings
/// with the master key in force, and where that key comes from.
fn open(settings: &Settings) -> Result<(Database, Settings, Option<KeySource>), DatabaseError> {
    let database = Database::open(settings, false)?;
    let mut settings = settings.clone();
    let key = database.key(&settings)?;
    let source = key.map(|(key, source)| {
        settings.secret_encryption_key = Some(key);
        source
    });
    Ok((database, settings, source))
}

/// Runs a command other than `serve` on `database`.
async fn run(
    command: Command,
    settings: &Settings,
    database: &Database,
    source: Option<KeySource>,
) -> Result<Option<Output>, Failure> {
    // The migration lock is a session's: straight to PostgreSQL when a pooler is in front.
    let applied =
        db::direct::migrate(&database.url, settings.direct_database_url.as_deref()).await.map_err(unavailable)?;
    if let (Some(key), Some(source)) = (&settings.secret_encryption_key, &source) {
        // A secret sealed now under another key than the stored ones' would never open.
        database.check_key(key, source).await.map_err(unavailable)?;
    }
    let context = || -> Result<admin::Context, Failure> {
        let pool = db::pool(&database.url, 2).map_err(unavailable)?;
        Ok(admin::Context::new(Store::new(pool, Emitter::none()), settings))
    };
    match command {
        Command::Migrate => Ok(Some(Output {
            text: format!("applied {} migration(s)", applied.len()),
            json: serde_json::json!({"applied": applied}),
        })),
        Command::Admin(cmd) => admin::run(&context()?, cmd).await.map(Some),
        Command::Digest(cmd) => digest::run(&context()?, settings, cmd).await.map(Some),
        // Handled by `main` before any database is opened.
        Command::Serve(_) => Ok(None),
    }
}
