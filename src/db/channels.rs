//! The notification channels: the names the schema's triggers and the store notify on,
//! each with the registered statement that listens on it (LISTEN takes no parameters,
//! so each channel has its own).

use super::listen::Channel;
use super::statement::statement;

statement! {
    static LISTEN_HOOKS = "LISTEN switchboard_hooks";
    static LISTEN_OUTBOX = "LISTEN switchboard_outbox";
    static LISTEN_AUTH = "LISTEN switchboard_auth";
    static LISTEN_AUTH_ACKS = "LISTEN switchboard_auth_acks";
    static LISTEN_CLAIMS = "LISTEN switchboard_claims";
    /// Stops listening for the auth listeners' acknowledgements.
    pub static UNLISTEN_AUTH_ACKS = "UNLISTEN switchboard_auth_acks";
}

/// Hook changes (migration `hook_change_notify`): the endpoint or hook that changed.
pub const HOOKS: Channel = Channel::new("switchboard_hooks", &LISTEN_HOOKS);

/// Outbox work to drain (the outbox migrations' triggers).
pub const OUTBOX: Channel = Channel::new("switchboard_outbox", &LISTEN_OUTBOX);

/// Credential and reach changes (migration `auth_change_notify`).
pub const AUTH: Channel = Channel::new("switchboard_auth", &LISTEN_AUTH);

/// The auth listeners' acknowledgements of what they forgot.
pub const AUTH_ACKS: Channel = Channel::new("switchboard_auth_acks", &LISTEN_AUTH_ACKS);

/// Claim wake-ups for long-polling agents.
pub const CLAIMS: Channel = Channel::new("switchboard_claims", &LISTEN_CLAIMS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_channel_listens_on_its_own_name() {
        for c in [HOOKS, OUTBOX, AUTH, AUTH_ACKS, CLAIMS] {
            assert_eq!(c.listen().text(), format!("LISTEN {}", c.name()));
        }
        assert_eq!(UNLISTEN_AUTH_ACKS.text(), format!("UNLISTEN {}", AUTH_ACKS.name()));
    }
}
