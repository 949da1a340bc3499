//! The one page frame: head (viewport, the embedded stylesheet), a header with the nav
//! and the sign-out form, the notice slot, and the page's own content.

use maud::{DOCTYPE, Markup, html};

use super::assets;
use super::respond::{Notice, Tone};
use super::session::Human;

/// The Board's sections, in nav order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// Where every queue stands.
    Queues,
    /// Todos and dead letters.
    Todos,
    /// Endpoints: vend, grants, revoke.
    Endpoints,
    /// Webhooks and routing rules.
    Webhooks,
    /// Hooks and their health.
    Hooks,
    /// Deliveries held by the sender gate.
    Quarantine,
    /// Connections, notification sinks, subscriptions and their delivery log.
    Sinks,
    /// Scheduled queue digests, their send times and previews.
    Digests,
}

impl Nav {
    /// Every section, in nav order.
    pub const ALL: [Nav; 8] =
        [Nav::Queues, Nav::Todos, Nav::Endpoints, Nav::Webhooks, Nav::Hooks, Nav::Quarantine, Nav::Sinks, Nav::Digests];

    /// The section's label.
    pub fn label(self) -> &'static str {
        match self {
            Nav::Queues => "Queues",
            Nav::Todos => "Todos",
            Nav::Endpoints => "Endpoints",
            Nav::Webhooks => "Webhooks",
            Nav::Hooks => "Hooks",
            Nav::Quarantine => "Quarantine",
            Nav::Sinks => "Sinks",
            Nav::Digests => "Digests",
        }
    }

    /// The section's path.
    pub fn href(self) -> &'static str {
        match self {
            Nav::Queues => super::queues::paths::QUEUES,
            Nav::Todos => super::todos::paths::TODOS,
            Nav::Endpoints => super::endpoints::paths::ENDPOINTS,
            Nav::Webhooks => super::webhooks::paths::WEBHOOKS,
            Nav::Hooks => super::hooks::paths::HOOKS,
            Nav::Quarantine => super::quarantine::paths::QUARANTINE,
            Nav::Sinks => super::sinks::paths::SINKS,
            Nav::Digests => super::digests::paths::DIGESTS,
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            meta name="referrer" content="same-origin";
            title { (title) " · Switchboard" }
            link rel="stylesheet" href=(assets::href("board.css"));
            link rel="icon" type="image/svg+xml" href=(assets::href("favicon.svg"));
        }
    }
}

/// A notice box (the layout shows the carried-over one; pages may show their own).
pub fn notice(n: &Notice) -> Markup {
    let class = match n.tone {
        Tone::Done => "sb-notice sb-notice-done",
        Tone::Warn => "sb-notice sb-notice-warn",
    };
    html! { div class=(class) role="status" { (n.text) } }
}

/// A signed-in page: `title` names it in the tab, `current` marks the nav, and `body`
/// is the page's own content (its `h1` included).
pub fn page(human: &Human, current: Nav, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.sb-skip href="#main" { "Skip to content" }
                header.sb-top {
                    a.sb-brand href=(Nav::Todos.href()) { "Switchboard" }
                    nav.sb-nav aria-label="Board" {
                        ul {
                            @for section in Nav::ALL {
                                li {
                                    @if section == current {
                                        a href=(section.href()) aria-current="page" { (section.label()) }
                                    } @else {
                                        a href=(section.href()) { (section.label()) }
                                    }
                                }
                            }
                        }
                    }
                    div.sb-who {
                        span.sb-who-name title=(human.email) { (human.name) }
                        form.sb-inline method="post" action=(super::paths::LOGOUT) {
                            (human.csrf_field())
                            button.sb-btn.sb-btn-quiet type="submit" { "Sign out" }
                        }
                    }
                }
                main #main .sb-main {
                    @if let Some(n) = &human.notice {
                        (notice(n))
                    }
                    (body)
                }
            }
        }
    }
}

/// A page outside the signed-in frame (sign-in, refusals): no nav, no session needed.
pub fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.sb-bare {
                main #main .sb-main .sb-narrow {
                    p.sb-brand { "Switchboard" }
                    (body)
                }
            }
        }
    }
}
