//! A tool's arguments are its route's path parameter (if the route has one) and its body,
//! side by side in one object: `complete` takes `{"id": "td_…", "lease_token": "…", …}`
//! where the route takes `/todos/{id}/complete` with `{"lease_token": "…", …}`. The body
//! is read by the REST API's own rules ([`crate::web::json_body::from_object`]: unknown
//! fields, wrong types and NUL characters refused with `invalid_argument`), and the
//! input schema is the body type's, generated from it, with the path parameter added.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::Error;
use crate::web::json_body::from_object;

/// The path parameter a tool's route has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathParam {
    /// None: the body is all.
    None,
    /// `{id}`, a todo id (`td_…`).
    TodoId,
    /// `{id}`, a hook id (`nh_…`).
    HookId,
    /// `{name}`, a sink's name.
    SinkName,
}

impl PathParam {
    /// The argument it is passed as.
    pub fn key(self) -> Option<&'static str> {
        match self {
            PathParam::None => None,
            PathParam::TodoId | PathParam::HookId => Some("id"),
            PathParam::SinkName => Some("name"),
        }
    }

    fn schema(self) -> Option<Value> {
        let id = |prefix: &str, what: &str| {
            json!({"type": "string", "pattern": format!("^{prefix}_[0-9a-f]{{32}}$"),
                   "description": format!("The {what}'s id (`{prefix}_` and 32 lowercase hex digits).")})
        };
        match self {
            PathParam::None => None,
            PathParam::TodoId => Some(id("td", "todo")),
            PathParam::HookId => Some(id("nh", "notify hook")),
            PathParam::SinkName => Some(json!({"type": "string", "minLength": 1, "maxLength": 100,
                "description": "The sink's name (unique among the owner's sinks)."})),
        }
    }
}

/// The input schema of a tool whose body is `B` and whose route has `path`: `B`'s schema
/// (draft 2020-12, as MCP asks) with the path parameter added as a required property.
pub fn input_schema<B: schemars::JsonSchema>(path: PathParam) -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = match generator.into_root_schema_for::<B>().to_value() {
        Value::Object(o) => o,
        // A body type is always a struct; were it not, the tool still takes its path.
        _ => Map::new(),
    };
    // The tool's description says what it does; the body type's name and doc are noise.
    schema.remove("title");
    schema.remove("description");
    schema.insert("type".into(), json!("object"));
    if let (Some(key), Some(param)) = (path.key(), path.schema()) {
        let properties = schema.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(p) = properties {
            p.insert(key.into(), param);
        }
        let required = schema.entry("required").or_insert_with(|| json!([]));
        if let Value::Array(r) = required {
            r.insert(0, json!(key));
        }
    }
    schema
}

/// The schema of a tool that takes nothing but its path parameter (if any).
pub fn bare_schema(path: PathParam) -> Map<String, Value> {
    input_schema::<Empty>(path)
}

/// A tool call's arguments.
pub struct Args(Map<String, Value>);

impl Args {
    /// The arguments as sent (absent: none).
    pub fn new(arguments: Option<Map<String, Value>>) -> Self {
        Args(arguments.unwrap_or_default())
    }

    /// The whole object read as the body `B`.
    pub fn body<B: DeserializeOwned>(self) -> Result<B, Error> {
        from_object(self.0)
    }

    /// Nothing: a tool without path or body refuses any argument, as its route's body
    /// would refuse any field.
    pub fn none(self) -> Result<(), Error> {
        match self.0.keys().next() {
            Some(k) => Err(Error::invalid(k, "unknown argument: this tool takes none")),
            None => Ok(()),
        }
    }

    /// The path parameter `key` (a string of type `P`) and the rest read as the body `B`.
    pub fn with<P: std::str::FromStr, B: DeserializeOwned>(mut self, path: PathParam) -> Result<(P, B), Error>
    where
        P::Err: std::fmt::Display,
    {
        let key = path.key().ok_or_else(|| Error::internal("a tool without a path parameter read one"))?;
        let param = match self.0.remove(key) {
            // What the route answers for the same path segment: a name a statement cannot
            // hold is `invalid_argument`; an id that does not parse is an unknown id,
            // `not_found` (`crate::web::path_name::path_error`), so that an agent branches
            // on one code whichever adapter it speaks.
            Some(Value::String(s)) => match (path, crate::web::path_name::refusal(&s)) {
                (PathParam::TodoId | PathParam::HookId, _) => s.parse::<P>().map_err(|_| Error::NotFound)?,
                (_, Some(why)) => return Err(Error::invalid(key, why)),
                (_, None) => s.parse::<P>().map_err(|e| Error::invalid(key, e))?,
            },
            Some(_) => return Err(Error::invalid(key, "must be a string")),
            None => return Err(Error::invalid(key, "required")),
        };
        Ok((param, from_object(self.0)?))
    }

    /// The path parameter alone: any other argument is refused.
    pub fn only<P: std::str::FromStr>(self, path: PathParam) -> Result<P, Error>
    where
        P::Err: std::fmt::Display,
    {
        let (param, Empty {}) = self.with(path)?;
        Ok(param)
    }
}

/// No body: refuses every field (the route of a bodiless verb reads none).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_api::todo_bodies::FinishBody;
    use crate::domain::ids::TodoId;

    fn args(v: Value) -> Args {
        let Value::Object(o) = v else { panic!("not an object") };
        Args::new(Some(o))
    }

    #[test]
    fn the_path_parameter_and_the_body_are_read_from_one_object() {
        let id = TodoId::new();
        let (got, body): (TodoId, FinishBody) =
            args(json!({"id": id.to_string(), "lease_token": "t", "summary": "ok"})).with(PathParam::TodoId).unwrap();
        assert_eq!(got, id);
        assert_eq!(body.lease_token.as_deref(), Some("t"));
    }

    #[test]
    fn a_malformed_id_is_not_found_as_on_the_route_and_a_name_no_statement_can_hold_is_invalid() {
        let hook = crate::domain::ids::HookId::new().to_string();
        for bad in ["td_nope", "", "TD_00000000000000000000000000000000", &hook, "td_0000000000000000000000000000000g"]
        {
            let err = args(json!({"id": bad})).only::<TodoId>(PathParam::TodoId).err().unwrap();
            assert_eq!(err.code(), "not_found", "{bad:?}");
        }
        let err = args(json!({"id": "td_nope"})).only::<crate::domain::ids::HookId>(PathParam::HookId).err().unwrap();
        assert_eq!(err.code(), "not_found");
        for bad in ["a\u{0}b", "a\nb", "\u{fffd}"] {
            let err = args(json!({"id": bad})).only::<TodoId>(PathParam::TodoId).err().unwrap();
            assert_eq!(err.code(), "not_found", "an id, as the route's: {bad:?}");
            let err = args(json!({"name": bad})).only::<String>(PathParam::SinkName).err().unwrap();
            assert_eq!(err.code(), "invalid_argument", "{bad:?}");
            assert!(err.to_string().starts_with("name: "), "{err}");
        }
    }

    #[test]
    fn a_bad_argument_is_invalid_argument_naming_it() {
        let id = TodoId::new().to_string();
        for (bad, names) in [
            (json!({"lease_token": "t"}), "id"),
            (json!({"id": 7}), "id"),
            (json!({"id": id, "lease_tokn": "t"}), "lease_tokn"),
            (json!({"id": id, "summary": 5}), "invalid type"),
            (json!({"id": id, "summary": "a\u{0}b"}), "NUL"),
        ] {
            let err = args(bad.clone()).with::<TodoId, FinishBody>(PathParam::TodoId).err().unwrap();
            assert_eq!(err.code(), "invalid_argument", "{bad}");
            assert!(err.to_string().contains(names), "{bad}: {err}");
        }
        assert_eq!(args(json!({"x": 1})).none().err().unwrap().code(), "invalid_argument");
        assert_eq!(
            args(json!({"id": id, "x": 1})).only::<TodoId>(PathParam::TodoId).err().unwrap().code(),
            "invalid_argument"
        );
    }

    #[test]
    fn the_input_schema_is_the_body_types_with_the_path_parameter_required() {
        let schema = Value::Object(input_schema::<FinishBody>(PathParam::TodoId));
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["id"]));
        assert_eq!(schema["additionalProperties"], false, "unknown fields are refused, as the route refuses them");
        for field in ["id", "result", "summary", "artifact", "lease_token"] {
            assert!(schema["properties"][field].is_object(), "{field}: {schema}");
        }
        assert!(schema["properties"]["lease_token"]["description"].as_str().unwrap().contains("lease token"));
        let bare = Value::Object(bare_schema(PathParam::None));
        assert_eq!(bare["type"], "object");
        assert_eq!(bare["additionalProperties"], false);
    }
}
