//! `/todos`: where sign-in lands. A placeholder frame until the Todos view (pills,
//! the Dead list, search) replaces this handler; it proves the session and the layout.

use actix_web::HttpResponse;
use maud::html;

use super::error::BoardError;
use super::layout::{self, Nav};
use super::respond;
use super::session::Human;

/// `GET /todos`.
pub async fn page(human: Human) -> Result<HttpResponse, BoardError> {
    let body = html! {
        h1 { "Todos" }
        p.sb-lede { "Signed in as " strong { (human.name) } " (" (human.email) ")." }
    };
    Ok(respond::page(&human, layout::page(&human, Nav::Todos, "Todos", body)))
}
