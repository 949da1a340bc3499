//! Typed, prefixed identifiers (`td_…`, `ep_…`): the compiler refuses a mix-up and a
//! reader of a log line or URL knows what kind of thing an id names.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

/// An id string that does not parse as the expected kind. Routes answer it exactly
/// like an unknown id (404), so a malformed id reveals nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid {kind} id")]
pub struct BadId {
    /// The kind of id that was expected, e.g. `todo`.
    pub kind: &'static str,
}

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal) => {
        typed_id!($(#[$doc])* $name, $prefix, $kind, Uuid::new_v4(), "A fresh random id.");
    };
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal, $fresh:expr, $fresh_doc:literal) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            diesel::expression::AsExpression, diesel::deserialize::FromSqlRow,
        )]
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        pub struct $name(pub Uuid);

        impl $name {
            /// The textual prefix of this kind of id.
            pub const PREFIX: &'static str = $prefix;

            #[doc = $fresh_doc]
            pub fn new() -> Self {
                Self($fresh)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}_{}", $prefix, self.0.simple())
            }
        }

        impl FromStr for $name {
            type Err = BadId;
            fn from_str(s: &str) -> Result<Self, BadId> {
                let rest = s
                    .strip_prefix($prefix)
                    .and_then(|r| r.strip_prefix('_'))
                    .ok_or(BadId { kind: $kind })?;
                if rest.len() != 32 || !rest.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(BadId { kind: $kind });
                }
                Uuid::try_parse(rest).map(Self).map_err(|_| BadId { kind: $kind })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl diesel::serialize::ToSql<diesel::sql_types::Uuid, diesel::pg::Pg> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
            ) -> diesel::serialize::Result {
                <Uuid as diesel::serialize::ToSql<diesel::sql_types::Uuid, diesel::pg::Pg>>::to_sql(&self.0, out)
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Uuid, diesel::pg::Pg> for $name {
            fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
                <Uuid as diesel::deserialize::FromSql<diesel::sql_types::Uuid, diesel::pg::Pg>>::from_sql(bytes).map(Self)
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .pattern(Some(concat!("^", $prefix, "_[0-9a-f]{32}$")))
                    .examples([serde_json::json!(concat!($prefix, "_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a"))])
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        // The same string the OpenAPI document describes, for the MCP tools' input schemas.
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "pattern": concat!("^", $prefix, "_[0-9a-f]{32}$"),
                    "description": concat!("A ", $kind, " id: `", $prefix, "_` and 32 lowercase hex digits."),
                })
            }
        }
    };
}

// Todos and events are the rows written at the rate work arrives, and every claim and
// completion writes a fresh entry into the todo's primary key (the row moves: its state is
// in the claim indexes' predicates, so no update of it is heap-only), and into
// `todos_event_idx` for a webhook's todo. With random ids each of those entries lands on a
// random leaf page, and after every checkpoint each leaf's first change is a full-page
// image in the WAL. Time-ordered ids (UUIDv7: 48 bits of milliseconds, then 74 random
// bits) put the entries of todos made together on the same few pages. Measured with
// `scripts/cycle-probe`'s statements on the seeded queue (the database alone, two runs of
// each seed, alternating): WAL per cycle 2 705-3 289 bytes against 3 789-4 324 with random
// ids, cycles per second 10 % and 27 % higher in the two pairs; over REST, WAL per cycle
// 2 360 against 2 797 bytes, the rate within noise (docs/benchmarks.md). The creation time an id reveals is the todo's
// `created_at` (an event's receipt), which whoever can name it can already read.
typed_id!(
    /// A todo: one unit of work on an endpoint's queue.
    TodoId, "td", "todo", Uuid::now_v7(), "A fresh time-ordered id (UUIDv7)."
);
typed_id!(
    /// An agent endpoint: a credential and the queues it drains.
    EndpointId, "ep", "endpoint"
);
typed_id!(
    /// A human who signs in to the Board and holds operator tokens.
    HumanId, "hu", "human"
);
typed_id!(
    /// A team of humans.
    TeamId, "tm", "team"
);
typed_id!(
    /// An owner scope: a human's own or a team's. Every tenant resource has one.
    ScopeId, "sc", "scope"
);
typed_id!(
    /// An inbound delivery recorded in the event log.
    EventId, "ev", "event", Uuid::now_v7(), "A fresh time-ordered id (UUIDv7), as a todo's."
);
typed_id!(
    /// An operator API token row.
    OperatorTokenId, "ot", "operator token"
);
typed_id!(
    /// An inbound webhook: an ingest URL bound to an endpoint and a default queue.
    WebhookId, "wh", "webhook"
);
typed_id!(
    /// A notify hook: an outbound URL told when work on an endpoint is ready or dead.
    HookId, "nh", "notify hook"
);
typed_id!(
    /// A connection: an owner's sealed credential for a notification service.
    ConnectionId, "cn", "connection"
);
typed_id!(
    /// A notification sink: where an owner's notifications are posted (Gotify, Apprise).
    SinkId, "sk", "sink"
);
typed_id!(
    /// A scheduled queue digest.
    DigestId, "dg", "digest"
);
typed_id!(
    /// One send time of a digest: what was sent or skipped, and why.
    DigestRunId, "dr", "digest run"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_round_trips_through_its_text_form() {
        let id = TodoId::new();
        let text = id.to_string();
        assert!(text.starts_with("td_"));
        assert_eq!(text.len(), 35);
        assert_eq!(text.parse::<TodoId>().unwrap(), id);
    }

    #[test]
    fn todo_and_event_ids_made_one_after_another_sort_in_that_order() {
        let todos: Vec<TodoId> = (0..10_000).map(|_| TodoId::new()).collect();
        assert!(todos.windows(2).all(|w| w[0] < w[1]), "todo ids out of order");
        assert_eq!(todos[0].0.get_version_num(), 7);
        let events: Vec<EventId> = (0..1_000).map(|_| EventId::new()).collect();
        assert!(events.windows(2).all(|w| w[0] < w[1]), "event ids out of order");
        // Other kinds stay random: nothing about them is written at the rate of work.
        assert_eq!(EndpointId::new().0.get_version_num(), 4);
    }

    #[test]
    fn an_id_of_another_kind_does_not_parse() {
        let ep = EndpointId::new().to_string();
        assert_eq!(ep.parse::<TodoId>(), Err(BadId { kind: "todo" }));
    }

    #[test]
    fn malformed_ids_do_not_parse() {
        for bad in [
            "",
            "td_",
            "td",
            "td_xyz",
            "td-0190b7c4e1a87d2f9c3b5a6e4d2c1b0a",
            "td_0190b7c4-e1a8-7d2f-9c3b-5a6e4d2c1b0a",
            "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0aa",
        ] {
            assert!(bad.parse::<TodoId>().is_err(), "{bad} parsed");
        }
    }
}
