//! Logging setup. Logs go to stderr so that `--json` output on stdout stays one object.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// The MCP library's logs, kept to warnings unless the filter names them: at info it logs
/// every session and notification, at debug every request with its arguments, and a tool's
/// arguments carry lease tokens.
const MCP_QUIET: &[&str] = &["rmcp=warn", "rmcp_actix_web=warn"];

/// Installs the global subscriber (the filter was validated with the settings).
pub fn init(filter: &str, format: LogFormat) {
    let mut env_filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    if !filter.contains("rmcp") {
        for directive in MCP_QUIET.iter().filter_map(|d| d.parse().ok()) {
            env_filter = env_filter.add_directive(directive);
        }
    }
    // Colour codes only on a terminal: in a file or a pipe they are noise in every line.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
