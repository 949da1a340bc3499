//! Enums stored as `text` columns (with a CHECK constraint in the migration) and
//! spoken as snake_case strings on the wire. The OpenAPI schema of each is built from
//! what serde writes for every variant, so the document cannot name a value the server
//! never sends (a derived schema once listed the Rust names, `"In"` for `"in"`).

/// Declares an enum whose variants map one-to-one onto fixed strings, with serde,
/// diesel (`text`) and OpenAPI support.
macro_rules! text_enum {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash,
            serde::Serialize, serde::Deserialize,
            diesel::expression::AsExpression, diesel::deserialize::FromSqlRow,
        )]
        #[diesel(sql_type = diesel::sql_types::Text)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored and wire form.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::domain::text_enum::UnknownVariant;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(crate::domain::text_enum::UnknownVariant {
                        kind: stringify!($name),
                        value: s.chars().take(64).collect(),
                    }),
                }
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                crate::domain::text_enum::wire_schema(&[$($doc),*], $name::ALL)
            }
        }

        impl utoipa::ToSchema for $name {}

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                crate::domain::text_enum::json_schema(&[$($doc),*], $name::ALL)
            }
        }

        impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
            ) -> diesel::serialize::Result {
                use std::io::Write;
                out.write_all(self.as_str().as_bytes())?;
                Ok(diesel::serialize::IsNull::No)
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
                let text = std::str::from_utf8(bytes.as_bytes())?;
                Ok(text.parse()?)
            }
        }
    };
}

pub(crate) use text_enum;

/// The schema of a text enum: a string whose values are exactly what serde writes for
/// `variants`, described by the type's doc lines.
pub fn wire_schema<T: serde::Serialize>(
    doc: &[&str],
    variants: &[T],
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    let description = doc.iter().map(|line| line.trim()).collect::<Vec<_>>().join("\n");
    let values = variants.iter().filter_map(|v| serde_json::to_value(v).ok());
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some(description))
        .enum_values(Some(values))
        .into()
}

/// The same schema as [`wire_schema`], as JSON Schema (the MCP tools' input schemas).
pub fn json_schema<T: serde::Serialize>(doc: &[&str], variants: &[T]) -> schemars::Schema {
    let description = doc.iter().map(|line| line.trim()).collect::<Vec<_>>().join("\n");
    let values: Vec<serde_json::Value> = variants.iter().filter_map(|v| serde_json::to_value(v).ok()).collect();
    schemars::json_schema!({ "type": "string", "enum": values, "description": description })
}

/// A string that names no variant of the expected enum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {value:?}")]
pub struct UnknownVariant {
    /// The enum that was expected.
    pub kind: &'static str,
    /// The offending text (truncated).
    pub value: String,
}
