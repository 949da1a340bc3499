//! Logging setup. Logs go to stderr so that `--json` output on stdout stays one object.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber (the filter was validated with the settings).
pub fn init(filter: &str, format: LogFormat) {
    let env_filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(env_filter).with_writer(std::io::stderr).with_target(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
