//! What the hook routes and the dispatcher obey, read once from the instance's
//! [`Settings`]: the kill switch, the ceiling per endpoint, plain http.

use crate::config::Settings;
use crate::error::{Error, Result};

/// What the hook routes obey, from [`Settings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSettings {
    /// `SWITCHBOARD_NOTIFY_HOOKS_ENABLED`: the kill switch.
    pub enabled: bool,
    /// `SWITCHBOARD_NOTIFY_HOOK_MAX`: hooks per endpoint (0 also switches hooks off).
    pub max: u32,
    /// `SWITCHBOARD_PUSH_ALLOW_HTTP`: plain-http URLs are accepted.
    pub allow_http: bool,
}

impl HookSettings {
    /// The hook settings of `settings`.
    pub fn from_settings(settings: &Settings) -> Self {
        HookSettings {
            enabled: settings.notify_hooks_enabled,
            max: settings.notify_hook_max,
            allow_http: settings.push_allow_http,
        }
    }

    /// Whether hooks may be created at all (the kill switch is off and the ceiling above 0).
    pub fn accepting(&self) -> bool {
        self.enabled && self.max > 0
    }

    /// Refuses creation while hooks are switched off: `409 conflict` naming the setting
    /// (not 503, which would claim a passing outage and hide the message). Checked
    /// before the URL is, so a refused create costs no DNS lookup.
    pub fn refuse_when_off(&self) -> Result<()> {
        if self.accepting() {
            Ok(())
        } else {
            Err(Error::Conflict(
                "notify hooks are switched off on this instance \
                 (SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false or SWITCHBOARD_NOTIFY_HOOK_MAX=0)"
                    .into(),
            ))
        }
    }
}
