//! The Board: server-rendered pages for humans (maud, so every value is escaped),
//! behind a password sign-in with database sessions and a CSRF token on every POST.
//! Every page works without JavaScript.
//!
//! A thin adapter over [`crate::service`]: a handler parses, calls one service with the
//! signed-in human's reach, and renders; what they may do is the services' to decide.
//!
//! Where things are: [`session`] (who is signed in), [`extract`] (the [`Human`] and
//! [`Posted`] extractors), [`cookies`] (the cookie rules), [`csrf`] (tokens),
//! [`login`] (sign-in and sign-out), [`layout`] (the one page frame), [`respond`] (HTML
//! responses and their headers), [`notice`] (a message across a redirect), [`error`]
//! (refusals rendered as pages), [`ids`] (a malformed id answers 404), [`paths`],
//! [`state`], [`assets`] (the embedded `templates/`); then one folder per section.
//!
//! Adding a page: write `async fn handler(human: Human, …) -> Result<HttpResponse,
//! BoardError>` that ends in `respond::page(&human, layout::page(&human, Nav::…,
//! title, body))`, and add one line to its section's `routes()` naming the [`Action`]
//! it performs (the permission test then covers it). A form that changes state posts
//! to a handler taking [`Posted<T>`] and renders [`Human::csrf_field`] inside the form.

pub mod assets;
pub mod cookies;
pub mod csrf;
pub mod digests;
pub mod endpoints;
pub mod error;
pub mod extract;
pub mod forms;
pub mod hooks;
pub mod ids;
pub mod layout;
pub mod login;
pub mod notice;
pub mod owners;
pub mod paths;
pub mod quarantine;
pub mod queues;
pub mod rate_limit;
pub mod respond;
pub mod session;
pub mod sinks;
pub mod state;
pub mod todos;
pub mod webhooks;

use actix_web::http::Method;
use actix_web::{HttpResponse, web};

use crate::service::permissions::Action;
use crate::web::routes::Entry;

pub use error::BoardError;
pub use extract::Posted;
pub use layout::Nav;
pub use session::Human;
pub use state::BoardState;

/// Every route of the Board: sign-in, sign-out, assets, `/`, and every page (each
/// section lists its own, from its `paths`), each with the action it performs.
pub fn table() -> Vec<Entry> {
    let mut table = vec![
        Entry::new(Method::GET, "/", Action::BoardAssets, home),
        Entry::new(Method::GET, paths::LOGIN, Action::SignIn, login::form),
        Entry::new(Method::POST, paths::LOGIN, Action::SignIn, login::submit),
        Entry::new(Method::POST, paths::LOGOUT, Action::SignOut, login::logout),
        Entry::new(Method::GET, paths::STATIC, Action::BoardAssets, assets::serve),
    ];
    table.extend(queues::routes());
    table.extend(todos::routes());
    table.extend(endpoints::routes());
    table.extend(webhooks::routes());
    table.extend(hooks::routes());
    table.extend(quarantine::routes());
    table.extend(sinks::routes());
    table.extend(digests::routes());
    table
}

/// Mounts the Board's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    crate::web::routes::mount(cfg, table());
}

/// `/`: the Todos view when signed in, else the sign-in form.
async fn home(human: Option<Human>) -> HttpResponse {
    respond::see_other(if human.is_some() { paths::LANDING } else { paths::LOGIN })
}
