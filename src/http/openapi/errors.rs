//! The error answers every route shares, added to each operation by what the operation
//! takes, so an annotation cannot forget one: the extractors and the error mapping
//! answer them for every route alike (see `crate::error` and `super::super::body`).

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, ResponseBuilder};

use crate::web::path_name;

/// Adds, where the annotation has not already: 401 to every operation that asks for a
/// bearer token, 404 to every operation with a path parameter (an unknown, foreign or
/// malformed id), 408, 413 and 422 to every operation with a request body, 422 to every
/// operation with query parameters or a name in its path
/// ([`crate::web::path_name::PathName`]), and 503 to
/// every operation behind the database.
pub struct SharedErrors;

impl utoipa::Modify for SharedErrors {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let database = path.starts_with("/api/") || path.starts_with("/webhooks/");
            for op in
                [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch].into_iter().flatten()
            {
                add_shared(op, database);
            }
        }
    }
}

fn add_shared(op: &mut Operation, database: bool) {
    let params = op.parameters.as_deref().unwrap_or_default();
    let has_path = params.iter().any(|p| p.parameter_in == ParameterIn::Path);
    let has_name = params.iter().any(|p| p.parameter_in == ParameterIn::Path && is_path_name(p.schema.as_ref()));
    let has_query = params.iter().any(|p| p.parameter_in == ParameterIn::Query);
    let has_body = op.request_body.is_some();
    let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
    let wanted = [
        (secured, "401", "missing, unknown or revoked bearer token"),
        (has_path, "404", "unknown id, an id outside the caller's reach, or a malformed id"),
        (has_body, "408", "the request body did not arrive within the body read timeout"),
        (has_body, "413", "request body over 1 MiB"),
        (has_body || has_query, "422", "malformed JSON, wrong types, unknown fields or out-of-range values"),
        (has_name, "422", "a name in the path holding NUL, another control character or bytes that are not UTF-8"),
        (database, "503", "the database is unavailable"),
    ];
    for (applies, status, description) in wanted {
        if applies && !op.responses.responses.contains_key(status) {
            op.responses.responses.insert(status.to_owned(), envelope(description));
        }
    }
}

/// Whether a parameter's schema is a [`path_name::PathName`]'s (by its title).
fn is_path_name(schema: Option<&RefOr<Schema>>) -> bool {
    match schema {
        Some(RefOr::T(Schema::Object(o))) => o.title.as_deref() == Some(path_name::SCHEMA_TITLE),
        Some(RefOr::Ref(r)) => r.ref_location.rsplit('/').next() == Some(path_name::SCHEMA_TITLE),
        _ => false,
    }
}

fn envelope(description: &str) -> RefOr<utoipa::openapi::Response> {
    let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorEnvelope"))).build();
    ResponseBuilder::new().description(description).content("application/json", content).build().into()
}
