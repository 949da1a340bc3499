//! Optional request bodies. A route that reads `OptionalJson` takes no body (or a blank
//! one) as "all defaults", but a JSON `null` is not an object and is refused with 422
//! like any other non-object. utoipa renders `request_body = Option<T>` as "not
//! required, `null` or `T`", which would promise that `null` is accepted; this keeps
//! "not required" and drops the `null`.

use utoipa::openapi::schema::{Schema, Type};
use utoipa::openapi::{OpenApi, RefOr, Required};

/// Rewrites every optional body's `oneOf: [null, T]` to `T`.
pub struct OptionalBodies;

impl utoipa::Modify for OptionalBodies {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in [&mut item.get, &mut item.post, &mut item.put, &mut item.delete].into_iter().flatten() {
                let Some(body) = op.request_body.as_mut() else { continue };
                if body.required == Some(Required::True) {
                    continue;
                }
                for content in body.content.values_mut() {
                    if let Some(schema) = content.schema.take() {
                        content.schema = Some(without_null(schema));
                    }
                }
            }
        }
    }
}

fn without_null(schema: RefOr<Schema>) -> RefOr<Schema> {
    let RefOr::T(Schema::OneOf(one_of)) = &schema else { return schema };
    let mut rest = one_of.items.iter().filter(|s| !is_null(s));
    match (rest.next(), rest.next()) {
        (Some(only), None) => only.clone(),
        _ => schema,
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(schema, RefOr::T(Schema::Object(o)) if o.schema_type == Type::Null.into())
}
