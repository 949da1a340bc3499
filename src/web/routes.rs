//! A route table entry: every route of the API and of the Board names the service
//! action it performs, so the permission matrix ([`crate::service::permissions`]) can
//! be checked against every route, and a route cannot be mounted without naming one.

use actix_web::http::Method;
use actix_web::{Route, web};

use crate::error::Error;
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

/// Mounts every entry of `table`, and for each path a fallback that answers any other
/// method with 405 `method_not_allowed` and an `Allow` header listing the methods the
/// path takes (HEAD and OPTIONS included: no path serves them).
///
/// Each entry stays a resource of its own, guarded by its method, so routing is exactly
/// what the table's order says; a path's fallback is placed after the path's last entry
/// and after every later entry its pattern also matches (`/todos/{id}`'s after
/// `/todos/bulk-retry`'s), so that it never takes a request another route would serve.
/// A literal path's fallback therefore comes before a `{param}` pattern that follows it:
/// `GET /api/v1/agent/todos/claim-next` is 405 (it takes POST), not the todo `claim-next`.
pub fn mount(cfg: &mut web::ServiceConfig, table: Vec<Entry>) {
    let rows: Vec<Row> = table.iter().map(Entry::row).collect();
    let plan = fallbacks(&rows);
    for (i, entry) in table.into_iter().enumerate() {
        cfg.route(entry.path, entry.route);
        for (path, allow) in plan.iter().filter(|f| f.after == i).map(|f| (f.path, f.allow.clone())) {
            cfg.service(web::resource(path).default_service(web::to(move || {
                let allow = allow.clone();
                async move { Err::<actix_web::HttpResponse, _>(Error::MethodNotAllowed(allow)) }
            })));
        }
    }
}

/// Where a path's 405 fallback goes: after the entry at index `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// The path pattern.
    pub path: &'static str,
    /// Its methods, as the `Allow` header lists them (`GET, POST`).
    pub allow: String,
    /// The index of the entry it follows.
    pub after: usize,
}

/// The fallbacks of `rows`, in the order the paths first appear.
pub fn fallbacks(rows: &[Row]) -> Vec<Fallback> {
    // The distinct paths in the order they first appear, each pattern compiled once (a
    // pattern is a regex: every worker mounts the table, so this stays linear in them).
    let mut paths: Vec<&'static str> = Vec::new();
    for row in rows {
        if !paths.contains(&row.path) {
            paths.push(row.path);
        }
    }
    let patterns: Vec<actix_web::dev::ResourceDef> =
        paths.iter().map(|p| actix_web::dev::ResourceDef::new(*p)).collect();
    let samples: Vec<String> = paths.iter().map(|p| instance(p)).collect();
    // `covers[i][j]`: path i's pattern matches path j (i ≠ j).
    let covers: Vec<Vec<bool>> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| samples.iter().enumerate().map(|(j, q)| i != j && p.is_match(q)).collect())
        .collect();
    let index = |path: &str| paths.iter().position(|p| *p == path).unwrap_or_default();
    let mut out: Vec<Fallback> = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let mut methods: Vec<&Method> = rows.iter().filter(|r| r.path == *path).map(|r| &r.method).collect();
        methods.dedup();
        let allow = methods.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
        let after = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.path == *path || covers[i][index(r.path)])
            .map(|(k, _)| k)
            .max()
            .unwrap_or_default();
        out.push(Fallback { path, allow, after });
    }
    // A fallback also follows the fallback of every other path its pattern matches, so
    // that `PUT /todos/bulk` is refused with `/todos/bulk`'s methods, not `{id}`'s.
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..out.len() {
            let latest = (0..out.len()).filter(|&j| covers[i][j]).map(|j| out[j].after).max();
            if let Some(latest) = latest.filter(|&l| l > out[i].after) {
                out[i].after = latest;
                changed = true;
            }
        }
    }
    let ranked: Vec<(usize, usize)> =
        (0..out.len()).map(|i| (out[i].after, covers[i].iter().filter(|c| **c).count())).collect();
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by_key(|&i| ranked[i]);
    order.into_iter().map(|i| out[i].clone()).collect()
}

/// A path `pattern` could be asked as, each `{param}` filled with a sample segment.
fn instance(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut in_param = false;
    for c in pattern.chars() {
        match (c, in_param) {
            ('{', _) => in_param = true,
            ('}', true) => {
                in_param = false;
                out.push_str("sample");
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: Method, path: &'static str) -> Row {
        Row { method, path, action: Action::Health }
    }

    #[test]
    fn a_paths_fallback_follows_its_last_entry_and_every_later_entry_its_pattern_matches() {
        let rows = [
            row(Method::GET, "/todos"),
            row(Method::POST, "/todos/claim-next"),
            row(Method::GET, "/todos/{id}"),
            row(Method::POST, "/todos/bulk"),
            row(Method::POST, "/todos"),
            row(Method::DELETE, "/todos/{id}/x"),
        ];
        let got = fallbacks(&rows);
        let summary: Vec<(&str, &str, usize)> = got.iter().map(|f| (f.path, f.allow.as_str(), f.after)).collect();
        assert_eq!(
            summary,
            [
                // Before `{id}`: a literal path is 405 for GET, not the id `claim-next`.
                ("/todos/claim-next", "POST", 1),
                // `/todos/bulk`'s before `{id}`'s, which matches it: PUT /todos/bulk lists POST.
                ("/todos/bulk", "POST", 3),
                // After `/todos/bulk`, which `{id}` matches: POST /todos/bulk stays served.
                ("/todos/{id}", "GET", 3),
                ("/todos", "GET, POST", 4),
                ("/todos/{id}/x", "DELETE", 5),
            ]
        );
    }
}
