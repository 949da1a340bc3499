//! Where a connection's secret may be sent (issue 37, SPEC section 13 "Connections bound
//! to their destination"). A gotify or apprise connection is created with the base URL its
//! secret is for; a sink takes its destination from its connection. A request that still
//! names a base URL is accepted only when it is the same destination, compared after
//! normalising what does not change where a request goes: the scheme's and host's case,
//! a port that is the scheme's default, and trailing slashes.
//!
//! Which existing connections the upgrade can bind, and to what, is decided here too
//! ([`binding`]), from what the store read of their sinks.

use std::collections::BTreeSet;

/// Why a base URL is not a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
pub enum DestinationError {
    /// Not an absolute URL with a host.
    #[error("is not an absolute URL with a host")]
    NotAUrl,
    /// A query or fragment: a base URL has paths appended to it.
    #[error("must not carry a query or a fragment")]
    QueryOrFragment,
    /// A user name or password: credentials belong in the connection's secret, and the
    /// outbound guard refuses them on every dial.
    #[error("must not carry a user name or password")]
    Userinfo,
}

/// The normalised form of a base URL: lower-case scheme and host, no default port,
/// no trailing slash; the path otherwise as given (a Gotify behind a path prefix is a
/// different destination from one at the root).
pub fn normalised(raw: &str) -> Result<String, DestinationError> {
    let url = url::Url::parse(raw.trim()).map_err(|_| DestinationError::NotAUrl)?;
    let Some(host) = url.host_str() else { return Err(DestinationError::NotAUrl) };
    if url.query().is_some() || url.fragment().is_some() {
        return Err(DestinationError::QueryOrFragment);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DestinationError::Userinfo);
    }
    // `Url` already lower-cases the scheme and host and drops a default port.
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    Ok(format!("{}://{host}{port}{path}", url.scheme()))
}

/// Whether `asked` (what a request named) is `bound` (a connection's destination, as
/// stored normalised). A URL that does not parse is no destination at all.
pub fn same(asked: &str, bound: &str) -> bool {
    match (normalised(asked), normalised(bound)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One sink of an existing connection, as the upgrade reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkHistory {
    /// The sink's base URL.
    pub base_url: String,
    /// Whether a human created it (false: an agent did, or its creator is gone).
    pub created_by_human: bool,
    /// Who last wrote its destination or connection: `Some(true)` an agent, `Some(false)`
    /// a human, `None` an earlier release that did not record it.
    pub changed_by_agent: Option<bool>,
}

/// What the upgrade does with an existing gotify or apprise connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// Bound to this destination (normalised).
    Bound(String),
    /// Left unbound, for this reason (for the log): its sinks' messages are held until an
    /// admin rotates it with a destination.
    Unbound(&'static str),
}

/// Binds an existing connection to the one destination its sinks use, but only where no
/// agent created or last changed any of them. `scope_had_agent_writers`: an endpoint of the
/// connection's scope holds the `notifications` grant, so a sink an earlier release wrote
/// (which did not record who) may have been changed by an agent: its history cannot tell.
pub fn binding(sinks: &[SinkHistory], scope_had_agent_writers: bool) -> Binding {
    if sinks.is_empty() {
        return Binding::Unbound("no_sinks");
    }
    for sink in sinks {
        let agent_involved = match sink.changed_by_agent {
            Some(by_agent) => by_agent || !sink.created_by_human,
            None if !sink.created_by_human => true,
            None if scope_had_agent_writers => return Binding::Unbound("history_unknown"),
            None => false,
        };
        if agent_involved {
            return Binding::Unbound("agent_involved");
        }
    }
    let destinations: BTreeSet<Result<String, DestinationError>> =
        sinks.iter().map(|s| normalised(&s.base_url)).collect();
    match destinations.into_iter().collect::<Vec<_>>().as_slice() {
        [Ok(one)] => Binding::Bound(one.clone()),
        [Err(_)] => Binding::Unbound("no_destination"),
        _ => Binding::Unbound("several_destinations"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(url: &str) -> SinkHistory {
        SinkHistory { base_url: url.into(), created_by_human: true, changed_by_agent: Some(false) }
    }

    #[test]
    fn case_default_ports_and_trailing_slashes_do_not_change_a_destination() {
        assert_eq!(normalised("HTTPS://Gotify.Example.com:443/").unwrap(), "https://gotify.example.com");
        assert!(same("https://gotify.example.com/", "https://GOTIFY.example.com"));
        assert!(same("http://h.example:80/push//", "http://h.example/push"));
        assert!(same(" https://h.example/a ", "https://h.example/a/"));
    }

    #[test]
    fn another_host_port_scheme_or_path_is_another_destination() {
        let bound = "https://gotify.example.com";
        assert!(!same("https://evil.example.com", bound));
        assert!(!same("https://gotify.example.com:8443", bound));
        assert!(!same("http://gotify.example.com", bound));
        assert!(!same("https://gotify.example.com/other", bound));
        assert!(!same("https://gotify.example.com.evil.example", bound));
        assert!(!same("not a url", bound));
    }

    #[test]
    fn a_base_url_with_a_query_fragment_userinfo_or_no_host_is_refused() {
        assert_eq!(normalised("https://h.example/?x=1"), Err(DestinationError::QueryOrFragment));
        assert_eq!(normalised("https://h.example/#f"), Err(DestinationError::QueryOrFragment));
        assert_eq!(normalised("mailto:a@b.example"), Err(DestinationError::NotAUrl));
        assert_eq!(normalised("https://user:pw@h.example"), Err(DestinationError::Userinfo));
        assert_eq!(normalised("https://user@h.example"), Err(DestinationError::Userinfo));
        assert!(!same("https://user:pw@h.example", "https://h.example"), "never the same destination");
    }

    #[test]
    fn a_connection_whose_human_made_sinks_share_one_destination_is_bound_to_it() {
        let sinks = [human("https://g.example/"), human("HTTPS://g.example")];
        assert_eq!(binding(&sinks, false), Binding::Bound("https://g.example".into()));
        let legacy = SinkHistory { changed_by_agent: None, ..human("https://g.example") };
        assert_eq!(binding(&[legacy], false), Binding::Bound("https://g.example".into()));
    }

    #[test]
    fn several_destinations_or_none_leave_it_unbound() {
        assert_eq!(binding(&[], false), Binding::Unbound("no_sinks"));
        let sinks = [human("https://a.example"), human("https://b.example")];
        assert_eq!(binding(&sinks, false), Binding::Unbound("several_destinations"));
    }

    #[test]
    fn an_agent_that_created_or_changed_a_sink_leaves_it_unbound() {
        let rewritten = SinkHistory { changed_by_agent: Some(true), ..human("https://a.example") };
        assert_eq!(binding(&[human("https://a.example"), rewritten], false), Binding::Unbound("agent_involved"));
        let agent_made = SinkHistory { created_by_human: false, changed_by_agent: None, ..human("https://a.example") };
        assert_eq!(binding(&[agent_made], false), Binding::Unbound("agent_involved"));
    }

    #[test]
    fn an_earlier_release_s_sink_in_a_scope_with_agent_writers_cannot_tell_and_stays_unbound() {
        let legacy = SinkHistory { changed_by_agent: None, ..human("https://a.example") };
        assert_eq!(binding(&[legacy], true), Binding::Unbound("history_unknown"));
        // A sink this release wrote by a human tells, whatever the scope's grants.
        assert_eq!(binding(&[human("https://a.example")], true), Binding::Bound("https://a.example".into()));
    }
}
