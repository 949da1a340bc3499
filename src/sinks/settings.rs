//! What the sink routes and the outbox obey, read once from the instance's
//! [`Settings`]: a new sink's budget and burst, the operator's bounds on them, sinks per
//! owner scope, and the Apprise schemes stateless URLs may use.

use crate::config::Settings;
use crate::sinks::rules::schemes::SchemePolicy;

/// What the sink routes obey, from [`Settings`].
#[derive(Debug, Clone)]
pub struct SinkSettings {
    /// `SWITCHBOARD_SINK_BUDGET_PER_HOUR`: a new sink's refill rate.
    pub budget_per_hour: u32,
    /// `SWITCHBOARD_SINK_BURST`: a new sink's bucket size.
    pub burst: u32,
    /// `SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR`: the most any sink may set for itself.
    pub budget_max_per_hour: u32,
    /// `SWITCHBOARD_SINK_BURST_MAX`: the largest burst any sink may set for itself.
    pub burst_max: u32,
    /// `SWITCHBOARD_SINK_MAX`: sinks per owner scope.
    pub max: u32,
    /// `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES`: what stateless Apprise URLs may use.
    pub schemes: SchemePolicy,
}

impl SinkSettings {
    /// The sink settings of `settings`; refused when a new sink's default budget or
    /// burst would already exceed the operator's bound on them.
    pub fn from_settings(settings: &Settings) -> std::result::Result<Self, String> {
        if settings.sink_budget_per_hour > settings.sink_budget_max_per_hour {
            return Err(format!(
                "SWITCHBOARD_SINK_BUDGET_PER_HOUR ({}) exceeds SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR ({})",
                settings.sink_budget_per_hour, settings.sink_budget_max_per_hour
            ));
        }
        if settings.sink_burst > settings.sink_burst_max {
            return Err(format!(
                "SWITCHBOARD_SINK_BURST ({}) exceeds SWITCHBOARD_SINK_BURST_MAX ({})",
                settings.sink_burst, settings.sink_burst_max
            ));
        }
        Ok(SinkSettings {
            budget_per_hour: settings.sink_budget_per_hour,
            burst: settings.sink_burst,
            budget_max_per_hour: settings.sink_budget_max_per_hour,
            burst_max: settings.sink_burst_max,
            max: settings.sink_max,
            schemes: SchemePolicy::from_setting(&settings.apprise_allowed_schemes),
        })
    }
}
