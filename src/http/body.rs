//! Request body and query extraction that answers every bad input with the error
//! envelope: malformed JSON or wrong types → 422, too large → 413, too slow → 408
//! (the reading itself is [`crate::web::body_read`], the JSON rules
//! [`crate::web::json_body`], which MCP tools' arguments are read by too).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::web::body_read::{declared_length, read_bounded, read_timeout};
use crate::web::json_body::{BODY_LIMIT, parse};

/// A required JSON body.
#[derive(Debug)]
pub struct Json<T>(pub T);

/// A JSON body that may be absent (an empty body means `T::default()`).
#[derive(Debug)]
pub struct OptionalJson<T>(pub T);

fn check_content_type(req: &HttpRequest) -> Result<(), Error> {
    match req.headers().get(actix_web::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
        None => Ok(()),
        Some(ct) if ct.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")) => Ok(()),
        Some(_) => Err(Error::InvalidArgument("body: content-type must be application/json".into())),
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, Error>>>>;

/// Reads and parses a JSON body; `on_blank` answers for an empty one.
fn extract<T: DeserializeOwned + 'static>(
    req: &HttpRequest,
    payload: &mut Payload,
    on_blank: fn() -> Result<T, Error>,
) -> BoxFuture<T> {
    let checked = check_content_type(req);
    let declared = declared_length(req);
    let timeout = read_timeout(req);
    let payload = payload.take();
    Box::pin(async move {
        checked?;
        let bytes = read_bounded(payload, declared, BODY_LIMIT, timeout).await?;
        if is_blank(&bytes) {
            return on_blank();
        }
        parse(&bytes)
    })
}

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = Error;
    type Future = BoxFuture<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = extract::<T>(req, payload, || Err(Error::InvalidArgument("body: a JSON object is required".into())));
        Box::pin(async move { body.await.map(Json) })
    }
}

impl<T: DeserializeOwned + Default + 'static> FromRequest for OptionalJson<T> {
    type Error = Error;
    type Future = BoxFuture<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = extract::<T>(req, payload, || Ok(T::default()));
        Box::pin(async move { body.await.map(OptionalJson) })
    }
}

/// A query string read as `T` (malformed or wrong types: 422 `invalid_argument`), with
/// NUL (`%00`) refused in every name and value (422) before a handler runs: PostgreSQL
/// `text` cannot hold it, so a filter holding it used to reach a statement and come back
/// as a 500. Every API route reads its query through this.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T> Query<T> {
    /// The query, read.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Query<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Reads `query` (without the `?`) as `T`.
fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, Error> {
    let parsed = serde_urlencoded::from_str::<T>(query).map_err(|e| Error::InvalidArgument(format!("query: {e}")))?;
    if let Some((name, _)) =
        url::form_urlencoded::parse(query.as_bytes()).find(|(k, v)| k.contains('\0') || v.contains('\0'))
    {
        return Err(Error::invalid(&name.replace('\0', "\\0"), "may not contain NUL (%00) characters"));
    }
    Ok(parsed)
}

impl<T: DeserializeOwned + 'static> FromRequest for Query<T> {
    type Error = Error;
    type Future = std::future::Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(parse_query(req.query_string()).map(Query))
    }
}

/// Maps a query-string parse failure to `invalid_argument`.
pub fn query_config() -> actix_web::web::QueryConfig {
    actix_web::web::QueryConfig::default().error_handler(|e, _| Error::InvalidArgument(format!("query: {e}")).into())
}

/// Maps a path parse failure to `not_found` (a malformed id is an unknown id), or to
/// `invalid_argument` for a name a statement cannot hold
/// ([`crate::web::path_name::PathName`]).
pub fn path_config() -> actix_web::web::PathConfig {
    actix_web::web::PathConfig::default().error_handler(|e, _| crate::web::path_name::path_error(&e).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Filter {
        q: Option<String>,
        limit: Option<i64>,
    }

    #[test]
    fn a_query_holding_nul_anywhere_is_refused_and_any_other_is_read() {
        let read = parse_query::<Filter>("q=caf%C3%A9&limit=5").unwrap();
        assert_eq!((read.q.as_deref(), read.limit), (Some("café"), Some(5)));
        for refused in ["q=%00", "q=a%00b", "q=ok&other=%00", "%00=x", "limit=x"] {
            assert!(matches!(parse_query::<Filter>(refused), Err(Error::InvalidArgument(_))), "{refused}");
        }
    }
}
