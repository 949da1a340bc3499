//! The Board: server-rendered pages for humans (maud, so every value is escaped),
//! behind a password sign-in with database sessions and a CSRF token on every POST.
//! Every page works without JavaScript.
//!
//! Where things are: [`session`] (the [`Human`] extractor and the cookie rules),
//! [`csrf`] (tokens and the [`Posted`] form extractor), [`login`] (sign-in and
//! sign-out), [`layout`] (the one page frame), [`respond`] (HTML responses and their
//! headers), [`error`] (refusals rendered as pages), [`scope`] (another scope's ids
//! answer 404), [`assets`] (the embedded `templates/`).
//!
//! Adding a page: write `async fn handler(human: Human, …) -> Result<HttpResponse,
//! BoardError>` that ends in `respond::page(&human, layout::page(&human, Nav::…,
//! title, body))`, and add one line to [`pages`]. A form that changes state posts to a
//! handler taking [`Posted<T>`] and renders [`Human::csrf_field`] inside the form.

pub mod assets;
pub mod csrf;
pub mod endpoints;
pub mod error;
pub mod forms;
pub mod hooks;
pub mod layout;
pub mod login;
pub mod owners;
pub mod quarantine;
pub mod rate_limit;
pub mod respond;
pub mod scope;
pub mod session;
pub mod todos;
pub mod todos_page;
pub mod todos_retry;
pub mod webhooks;

use actix_web::{HttpResponse, web};

pub use csrf::Posted;
pub use error::BoardError;
pub use layout::Nav;
pub use session::Human;

/// What the Board shares across workers: the cookie rules and the sign-in limits.
#[derive(Clone)]
pub struct BoardState {
    /// How session cookies are set.
    pub cookies: session::CookiePolicy,
    /// Sign-in attempts per email and per client address.
    pub login_limits: rate_limit::LoginLimits,
}

impl BoardState {
    /// The Board's state for a service reachable at `base_url`.
    pub fn new(base_url: &str) -> Self {
        crate::domain::passwords::prepare_dummy_hash();
        BoardState {
            cookies: session::CookiePolicy::for_base_url(base_url),
            login_limits: rate_limit::LoginLimits::default(),
        }
    }
}

/// Every signed-in page: its path and its route (each section lists its own).
fn pages() -> Vec<(&'static str, actix_web::Route)> {
    let mut pages = vec![
        ("/todos", web::get().to(todos_page::list)),
        // Before `/todos/{id}/retry`, whose `{id}` would otherwise take "dead".
        ("/todos/dead/retry", web::post().to(todos_retry::retry_dead)),
        ("/todos/{id}", web::get().to(todos_page::detail)),
        ("/todos/{id}/retry", web::post().to(todos_retry::retry_one)),
    ];
    pages.extend([
        ("/endpoints", web::get().to(endpoints::handlers::list)),
        ("/endpoints", web::post().to(endpoints::handlers::vend)),
        ("/endpoints/{id}", web::get().to(endpoints::handlers::show)),
        ("/endpoints/{id}/revoke", web::get().to(endpoints::handlers::confirm_revoke)),
        ("/endpoints/{id}/revoke", web::post().to(endpoints::handlers::revoke)),
        ("/webhooks", web::get().to(webhooks::handlers::list)),
        ("/webhooks", web::post().to(webhooks::handlers::create)),
        ("/webhooks/{id}", web::get().to(webhooks::handlers::show)),
        ("/webhooks/{id}/rules", web::post().to(webhooks::handlers::save_rules)),
        ("/webhooks/{id}/rules/test", web::post().to(webhooks::handlers::test_rules)),
    ]);
    pages.extend(hooks::pages());
    pages.extend(quarantine::pages());
    pages
}

/// The Board's routes (sign-in, sign-out, assets, `/`, and every page).
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(home))
        .route("/login", web::get().to(login::form))
        .route("/login", web::post().to(login::submit))
        .route("/logout", web::post().to(login::logout))
        .route("/static/{file}", web::get().to(assets::serve));
    for (path, route) in pages() {
        cfg.route(path, route);
    }
}

/// `/`: the Todos view when signed in, else the sign-in form.
async fn home(human: Option<Human>) -> HttpResponse {
    respond::see_other(if human.is_some() { login::LANDING } else { "/login" })
}
