//! What the connection details may contain and how they are written down: the database
//! name, our settings file, and connection-string quoting.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use super::{CONF_FILE, EmbeddedError, EmbeddedPostgres, MAX_IDENTIFIER_BYTES, PGDATA, PORT, io_err};

pub(super) fn validate_database_name(name: &str) -> Result<(), EmbeddedError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > MAX_IDENTIFIER_BYTES {
        "it is longer than 63 bytes, which PostgreSQL would silently truncate"
    } else if name.chars().any(char::is_control) {
        "it contains control characters"
    } else {
        return Ok(());
    };
    Err(EmbeddedError::InvalidDatabaseName { name: name.to_owned(), reason })
}

impl EmbeddedPostgres {
    /// Write `pgdata/switchboard.conf`: socket only, in our run directory.
    pub(super) fn write_settings(&self) -> Result<(), EmbeddedError> {
        let path = self.data_dir.join(PGDATA).join(CONF_FILE);
        let contents = settings_file(&self.socket_dir.to_string_lossy());
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| io_err("create", &path, source))?;
        file.write_all(contents.as_bytes()).map_err(|source| io_err("write", &path, source))?;
        drop(file);
        if self.run_as.switch {
            // The server must be able to read it even if root's umask made it 0600.
            std::os::unix::fs::lchown(&path, Some(self.run_as.uid), Some(self.run_as.gid))
                .map_err(|source| io_err("change owner of", &path, source))?;
        }
        Ok(())
    }
}

/// Contents of `switchboard.conf`: no TCP at all, socket in our run directory.
pub(super) fn settings_file(socket_dir: &str) -> String {
    // unix_socket_directories is a comma-separated list in which a double-quoted entry
    // may contain commas and spaces ("" for a quote); the whole value is then a
    // postgresql.conf string ('' for a quote, \\ for a backslash).
    let list_entry = format!("\"{}\"", socket_dir.replace('"', "\"\""));
    format!(
        "# Written by Switchboard before every start of its private cluster; edits are overwritten.\n\
         listen_addresses = ''\n\
         unix_socket_directories = {}\n\
         port = {PORT}\n",
        conf_string(&list_entry)
    )
}

/// Quote a postgresql.conf string value.
fn conf_string(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
}

/// Quote a libpq key/value connection string value when needed. libpq and
/// tokio-postgres both read `'...'` with backslash escapes.
pub(super) fn conninfo_value(value: &str) -> String {
    let plain = !value.is_empty() && !value.chars().any(|c| c.is_whitespace() || c == '\'' || c == '\\');
    if plain { value.to_owned() } else { format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'")) }
}
