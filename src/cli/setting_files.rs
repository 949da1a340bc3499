//! Settings read from files. Beside every setting's variable `SWITCHBOARD_X` there is
//! `SWITCHBOARD_X_FILE`, naming a file that holds the value: systemd's `LoadCredential=`
//! hands secrets over as files (`SWITCHBOARD_DATABASE_URL_FILE=%d/database-url` in
//! `deploy/systemd/`), and so do container secrets, so a database password or the master
//! key need never sit in the process's environment, where every child process inherits
//! it and `/proc/<pid>/environ` shows it.
//!
//! A value from a file ranks as the variable would: below its flag, above the built-in
//! default. Naming both the variable and its file is refused (one source each, so nobody
//! wonders which one won), as is a file that cannot be read or is not UTF-8; the refusal
//! names the variable and the path, never the contents. Trailing line ends are dropped
//! (an editor's final newline is not part of a password); nothing else is changed.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, Command, Parser};

/// What turns a setting's variable name into the name of the variable naming its file.
pub const FILE_SUFFIX: &str = "_FILE";

/// A setting file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingFileError {
    /// The setting's variable and its file's are both set.
    #[error("{variable} and {variable}{FILE_SUFFIX} are both set: set one of them")]
    Both {
        /// The setting's variable.
        variable: String,
    },
    /// The file could not be read.
    #[error("{variable}{FILE_SUFFIX}: cannot read {}: {source}", path.display())]
    Unreadable {
        /// The setting's variable.
        variable: String,
        /// The file named.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not hold UTF-8 text.
    #[error("{variable}{FILE_SUFFIX}: {} does not hold UTF-8 text", path.display())]
    NotText {
        /// The setting's variable.
        variable: String,
        /// The file named.
        path: PathBuf,
    },
}

/// Parses the command line as `P`, with the values of every `SWITCHBOARD_X_FILE` read
/// from their files (the process's environment). Like [`Parser::parse`], a bad command
/// line prints clap's message and exits; a setting file that cannot be used is returned.
pub fn parse<P: Parser>() -> Result<P, SettingFileError> {
    let mut command = read_setting_files(P::command(), |name| std::env::var_os(name))?;
    let mut matches: ArgMatches = match command.try_get_matches_from_mut(std::env::args_os()) {
        Ok(matches) => matches,
        Err(e) => without_secret_value(e, &mut command).exit(),
    };
    Ok(P::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut command).exit()))
}

/// `error`, unless it is a refused value of a setting whose value is secret (one that
/// hides its variable's value from `--help`: the database URL, the master key, the
/// metrics token): clap's message quotes the value, so a database URL with a typo in its
/// port would print its password to the journal. Such a refusal is said again without
/// the value, keeping the setting's own reason (which never quotes it).
fn without_secret_value(error: clap::Error, command: &mut Command) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::ValueValidation {
        return error;
    }
    let Some(ContextValue::String(named)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let secret = command.get_arguments().any(|arg| {
        arg.is_hide_env_values_set() && arg.get_long().is_some_and(|long| named.starts_with(&format!("--{long} ")))
    });
    if !secret {
        return error;
    }
    let reason = std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default();
    let said = format!("invalid value for '{named}': {reason}\n");
    clap::Error::raw(ErrorKind::ValueValidation, said).format(command)
}

/// `command` with each argument whose variable has a `_FILE` twin in `env` defaulting
/// to that file's contents (hidden from `--help`).
pub fn read_setting_files(
    mut command: Command,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Command, SettingFileError> {
    let settings: Vec<(clap::Id, String)> = command
        .get_arguments()
        .filter_map(|arg| Some((arg.get_id().clone(), arg.get_env()?.to_string_lossy().into_owned())))
        .collect();
    for (id, variable) in settings {
        let Some(path) = env(&format!("{variable}{FILE_SUFFIX}")).map(PathBuf::from) else {
            continue;
        };
        if env(&variable).is_some() {
            return Err(SettingFileError::Both { variable });
        }
        let value = read_value(&variable, path)?;
        command = command.mut_arg(id, |arg| arg.default_value(value).hide_default_value(true));
    }
    Ok(command)
}

/// The value `path` holds, without its trailing line ends.
fn read_value(variable: &str, path: PathBuf) -> Result<String, SettingFileError> {
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(source) => return Err(SettingFileError::Unreadable { variable: variable.to_owned(), path, source }),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(SettingFileError::NotText { variable: variable.to_owned(), path });
    };
    Ok(text.trim_end_matches(['\n', '\r']).to_owned())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::FromArgMatches;

    use super::*;
    use crate::cli::Cli;

    /// A file holding `contents` in a directory of its own, removed when dropped.
    struct File(PathBuf);

    impl File {
        fn holding(contents: &[u8]) -> File {
            let dir = std::env::temp_dir().join(format!("sb-setting-file-{}", rand::random::<u64>()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("value");
            std::fs::write(&path, contents).unwrap();
            File(path)
        }
    }

    impl Drop for File {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
        }
    }

    /// The CLI parsed from `args` with `env` as the only environment the files are
    /// looked up in (clap itself still reads the process's, where no SWITCHBOARD_ variable
    /// is set under `cargo test`).
    fn parse(env: &[(&str, &str)], args: &[&str]) -> Result<Result<Cli, clap::Error>, SettingFileError> {
        let env: HashMap<String, OsString> = env.iter().map(|(k, v)| ((*k).to_owned(), OsString::from(v))).collect();
        let command = read_setting_files(<Cli as clap::CommandFactory>::command(), |name| env.get(name).cloned())?;
        let argv = std::iter::once("switchboard").chain(args.iter().copied());
        Ok(command.try_get_matches_from(argv).and_then(|m| Cli::from_arg_matches(&m)))
    }

    #[test]
    fn a_setting_is_read_from_the_file_its_file_variable_names_without_the_final_newline() {
        let url = File::holding(b"postgres://switchboard:s3cret@db.internal/switchboard\n");
        let key = File::holding(format!("{}\r\n", "ab".repeat(32)).as_bytes());
        let cli = parse(
            &[
                ("SWITCHBOARD_DATABASE_URL_FILE", url.0.to_str().unwrap()),
                ("SWITCHBOARD_SECRET_ENCRYPTION_KEY_FILE", key.0.to_str().unwrap()),
            ],
            &["migrate"],
        )
        .unwrap()
        .unwrap();
        let url = cli.settings.database_url.as_deref();
        assert_eq!(url, Some("postgres://switchboard:s3cret@db.internal/switchboard"));
        assert_eq!(cli.settings.secret_encryption_key.unwrap().0, [0xab; 32]);
    }

    #[test]
    fn any_setting_may_come_from_a_file_and_its_flag_still_wins() {
        let pool = File::holding(b"7\n");
        let env = [("SWITCHBOARD_DB_POOL_SIZE_FILE", pool.0.to_str().unwrap())];
        assert_eq!(parse(&env, &["migrate"]).unwrap().unwrap().settings.db_pool_size, 7);
        let flagged = parse(&env, &["--db-pool-size", "3", "migrate"]).unwrap().unwrap();
        assert_eq!(flagged.settings.db_pool_size, 3);
        // Without the file, the built-in default.
        assert_eq!(parse(&[], &["migrate"]).unwrap().unwrap().settings.db_pool_size, 16);
    }

    #[test]
    fn a_value_from_a_file_is_checked_like_the_variable_and_the_refusal_names_the_setting() {
        let pool = File::holding(b"0\n");
        let refused = parse(&[("SWITCHBOARD_DB_POOL_SIZE_FILE", pool.0.to_str().unwrap())], &["migrate"]).unwrap();
        let err = refused.err().unwrap().to_string();
        assert!(err.contains("--db-pool-size"), "{err}");
    }

    #[test]
    fn a_refused_secret_is_said_without_its_value_and_other_refusals_keep_theirs() {
        let mut command = <Cli as clap::CommandFactory>::command();
        let refusal = |command: &mut Command, args: &[&str]| {
            let argv = ["switchboard"].iter().chain(args).chain(&["migrate"]).copied().collect::<Vec<_>>();
            without_secret_value(command.try_get_matches_from_mut(argv).err().unwrap(), command).to_string()
        };
        let url = refusal(&mut command, &["--database-url", "postgres://u:hunter2@db:notaport/x"]);
        assert!(url.contains("--database-url") && url.contains("not a PostgreSQL URL"), "{url}");
        assert!(!url.contains("hunter2"), "{url}");
        let token = refusal(&mut command, &["--metrics-token", "hunter2"]);
        assert!(token.contains("at least 32 printable ASCII bytes") && !token.contains("hunter2"), "{token}");
        // A setting that is no secret is refused as clap says it, value and all.
        let pool = refusal(&mut command, &["--db-pool-size", "0"]);
        assert!(pool.contains("invalid value '0' for '--db-pool-size"), "{pool}");
    }

    #[test]
    fn the_variable_and_its_file_both_set_are_refused_naming_both() {
        let url = File::holding(b"postgres://db/x\n");
        let err = parse(
            &[
                ("SWITCHBOARD_DATABASE_URL", "postgres://other/y"),
                ("SWITCHBOARD_DATABASE_URL_FILE", url.0.to_str().unwrap()),
            ],
            &["migrate"],
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("SWITCHBOARD_DATABASE_URL and SWITCHBOARD_DATABASE_URL_FILE"), "{err}");
        assert!(!err.contains("postgres://"), "{err}");
    }

    #[test]
    fn a_file_that_cannot_be_read_or_is_not_text_is_refused_naming_the_variable_and_path_never_the_contents() {
        let missing = std::env::temp_dir().join(format!("sb-no-such-file-{}", rand::random::<u64>()));
        let err = parse(&[("SWITCHBOARD_METRICS_TOKEN_FILE", missing.to_str().unwrap())], &["migrate"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("SWITCHBOARD_METRICS_TOKEN_FILE: cannot read "), "{err}");
        assert!(err.contains(missing.to_str().unwrap()), "{err}");

        let binary = File::holding(b"s3cret\xff\xfe");
        let err = parse(&[("SWITCHBOARD_METRICS_TOKEN_FILE", binary.0.to_str().unwrap())], &["migrate"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("does not hold UTF-8 text") && !err.contains("s3cret"), "{err}");
    }

    #[test]
    fn help_never_shows_a_value_read_from_a_file() {
        let token = File::holding(format!("{}\n", "t0k3n".repeat(8)).as_bytes());
        let env: HashMap<String, OsString> =
            [("SWITCHBOARD_METRICS_TOKEN_FILE".to_owned(), OsString::from(&token.0))].into_iter().collect();
        let mut command =
            read_setting_files(<Cli as clap::CommandFactory>::command(), |name| env.get(name).cloned()).unwrap();
        let help = command.render_long_help().to_string();
        assert!(help.contains("--metrics-token"), "{help}");
        assert!(!help.contains("t0k3n"), "{help}");
        // And the subcommands, which carry the settings as global arguments.
        let serve = command.find_subcommand_mut("serve").unwrap().render_long_help().to_string();
        assert!(!serve.contains("t0k3n"), "{serve}");
    }
}
