//! A route table entry: every route of the API and of the Board names the service
//! action it performs, so the permission matrix ([`crate::service::permissions`]) can
//! be checked against every route, and a route cannot be mounted without naming one.

use actix_web::http::Method;
use actix_web::{Route, web};

use crate::service::permissions::Action;

/// One mounted route.
pub struct Entry {
    /// The method it answers.
    pub method: Method,
    /// The path pattern (`{id}` placeholders), in full.
    pub path: &'static str,
    /// What it does, and so who may do it.
    pub action: Action,
    /// The handler, guarded by `method`.
    pub route: Route,
}

impl Entry {
    /// `method path` doing `action` through `route` (whose method guard is set here).
    pub fn new<F, Args>(method: Method, path: &'static str, action: Action, handler: F) -> Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        let route = web::method(method.clone()).to(handler);
        Entry { method, path, action, route }
    }

    /// The entry without its handler, for listings and tests.
    pub fn row(&self) -> Row {
        Row { method: self.method.clone(), path: self.path, action: self.action }
    }
}

/// What a route table says of one route, without its handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The method.
    pub method: Method,
    /// The path pattern, in full.
    pub path: &'static str,
    /// The action it performs.
    pub action: Action,
}

/// Mounts every entry of `table`.
pub fn mount(cfg: &mut web::ServiceConfig, table: Vec<Entry>) {
    for entry in table {
        cfg.route(entry.path, entry.route);
    }
}
