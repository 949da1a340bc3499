//! The OpenAPI document, generated from the handlers' annotations and the DTO types,
//! completed by modifiers with what every route shares (bearer schemes, the error
//! answers of the extractors) and the links between operations.

mod bodies;
mod errors;
mod links;

use actix_web::HttpResponse;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{agent, health, intake, metrics, operator};
use bodies::OptionalBodies;
use errors::SharedErrors;
use links::IdLinks;

struct BearerSchemes;

impl Modify for BearerSchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, what) in
            [("endpoint_token", "agent endpoint token (sbk_…)"), ("operator_token", "human operator token (sbo_…)")]
        {
            components.add_security_scheme(
                name,
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(what)).build()),
            );
        }
    }
}

/// The API description served at `/api/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    info(title = "Switchboard", description = "Webhooks in, work for agents out; dead letters never die silently."),
    paths(
        health::healthz, health::readyz, metrics::scrape,
        agent::todos::list, agent::todos::claim_next, agent::todos::claim, agent::todos::get,
        agent::todos::heartbeat, agent::todos::complete, agent::todos::fail, agent::todos::release,
        agent::todos::interrupt, agent::todos::resume, agent::todos::create,
        agent::batches::complete, agent::batches::fail, agent::batches::create,
        agent::presence::clock_in, agent::presence::clock_out,
        agent::hooks::create, agent::hooks::list, agent::hooks::rotate, agent::hooks::delete,
        agent::sinks::list, agent::sinks::put, agent::sinks::delete, agent::sinks::test,
        agent::sinks::put_subscriptions, agent::owner_page::page,
        operator::endpoints::vend, operator::endpoints::list, operator::endpoints::revoke,
        operator::endpoints::grant_fanout, operator::endpoints::revoke_fanout,
        operator::admission::set, operator::admission::list,
        operator::todos::get, operator::todos::fail, operator::todos::retry,
        operator::dead_letters::list, operator::queues::list,
        operator::webhooks::create, operator::webhooks::list, operator::webhooks::put_rules,
        operator::webhooks::test_rules, intake::ingest,
        operator::quarantine::list, operator::quarantine::release, operator::quarantine::discard,
        operator::hooks::create, operator::hooks::list, operator::hooks::rotate, operator::hooks::enable,
        operator::hooks::disable, operator::hooks::delete,
        operator::connections::create, operator::connections::list, operator::connections::rotate,
        operator::connections::test, operator::connections::delete,
        operator::sinks::create, operator::sinks::list, operator::sinks::update, operator::sinks::delete,
        operator::sinks::test, operator::sinks::sends,
        operator::sinks::put_subscriptions, operator::sinks::get_subscriptions,
        operator::digests::create, operator::digests::list, operator::digests::get, operator::digests::replace,
        operator::digests::delete, operator::digests::preview,
    ),
    modifiers(&BearerSchemes, &OptionalBodies, &SharedErrors, &IdLinks)
)]
pub struct ApiDoc;

/// Serves the document.
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn operations(doc: &serde_json::Value) -> Vec<&serde_json::Value> {
        doc["paths"]
            .as_object()
            .into_iter()
            .flat_map(|p| p.values())
            .flat_map(|i| i.as_object().unwrap().values())
            .collect()
    }

    #[test]
    fn every_operation_has_its_own_operation_id() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let ids: Vec<&str> = operations(&doc).iter().map(|op| op["operationId"].as_str().unwrap()).collect();
        let unique: BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(ids.len(), unique.len(), "duplicate operationId in {ids:?}");
    }

    #[test]
    fn every_link_names_an_operation_of_the_document() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let ops = operations(&doc);
        let ids: BTreeSet<&str> = ops.iter().map(|op| op["operationId"].as_str().unwrap()).collect();
        let mut links = 0;
        for op in &ops {
            for response in op["responses"].as_object().unwrap().values() {
                for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                    links += 1;
                    let target = link["operationId"].as_str().unwrap();
                    assert!(ids.contains(target), "link to unknown operation {target}");
                }
            }
        }
        assert!(links >= 30, "only {links} links: a source operation was renamed");
    }

    #[test]
    fn enum_schemas_list_the_values_serde_writes() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Presence"]["enum"], serde_json::json!(["in", "out"]));
        assert_eq!(schemas["EndpointState"]["enum"], serde_json::json!(["active", "revoked"]));
        assert_eq!(schemas["TodoState"]["enum"][2], "input_required");
    }

    #[test]
    fn claim_next_answers_one_of_three_shapes_told_apart_by_their_list() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let ok = &doc["paths"]["/api/v1/agent/todos/claim-next"]["post"]["responses"]["200"];
        let answer = &ok["content"]["application/json"]["schema"];
        let answer = if let Some(r) = answer["$ref"].as_str() {
            &doc["components"]["schemas"][r.rsplit('/').next().unwrap()]
        } else {
            answer
        };
        let shapes: Vec<&str> =
            answer["oneOf"].as_array().unwrap().iter().map(|s| s["$ref"].as_str().unwrap()).collect();
        assert_eq!(
            shapes,
            [
                "#/components/schemas/ClaimAnswer",
                "#/components/schemas/BatchClaimAnswer",
                "#/components/schemas/LeanClaimAnswer"
            ],
            "{answer}"
        );
        let schemas = &doc["components"]["schemas"];
        for shape in ["ClaimAnswer", "BatchClaimAnswer", "LeanClaimAnswer"] {
            assert_eq!(schemas[shape]["additionalProperties"], false, "{shape} must not pass as another shape");
        }
        assert!(schemas["BatchClaimAnswer"]["required"].as_array().unwrap().contains(&"claims".into()));
        assert!(schemas["LeanClaimAnswer"]["required"].as_array().unwrap().contains(&"todos".into()));
        let params = doc["paths"]["/api/v1/agent/todos/claim-next"]["post"]["parameters"].as_array().unwrap();
        assert!(params.iter().any(|p| p["name"] == "answer" && p["in"] == "query"), "{params:?}");
        for path in ["/api/v1/agent/todos/complete", "/api/v1/agent/todos/fail", "/api/v1/agent/todos/batch"] {
            assert!(doc["paths"][path]["post"].is_object(), "{path} is documented");
        }
    }

    fn refs<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(o) => {
                out.extend(o.get("$ref").and_then(|r| r.as_str()));
                o.values().for_each(|v| refs(v, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(found.len() > 50, "{} references", found.len());
        for r in found {
            let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("{r} is not local"));
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
    }

    #[test]
    fn a_name_in_the_path_may_answer_422_and_an_id_404() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let paths = &doc["paths"];
        for (path, method) in [
            ("/api/v1/agent/sinks/{name}", "delete"),
            ("/api/v1/agent/sinks/{name}/test", "post"),
            ("/api/v1/agent/sinks/{name}/subscriptions", "put"),
            ("/api/v1/endpoints/{id}/queues/{queue}/admission", "put"),
        ] {
            let responses = &paths[path][method]["responses"];
            assert!(responses["422"].is_object(), "{method} {path}: {responses}");
            assert!(responses["404"].is_object(), "{method} {path}: {responses}");
        }
        let by_id = &paths["/api/v1/hooks/{id}"]["delete"]["responses"];
        assert!(by_id["404"].is_object() && by_id["422"].is_null(), "{by_id}");
    }

    #[test]
    fn an_optional_body_is_not_required_and_not_null() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let body = &doc["paths"]["/api/v1/agent/todos/claim-next"]["post"]["requestBody"];
        assert_ne!(body["required"], true);
        assert_eq!(body["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ClaimBody");
    }
}
