//! The OpenAPI document, generated from the handlers' annotations and the DTO types.

use actix_web::HttpResponse;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{agent, health, intake, metrics, operator};

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
        agent::presence::clock_in, agent::presence::clock_out,
        agent::hooks::create, agent::hooks::list, agent::hooks::rotate, agent::hooks::delete,
        operator::endpoints::vend, operator::endpoints::list, operator::endpoints::revoke,
        operator::endpoints::grant_fanout, operator::endpoints::revoke_fanout,
        operator::todos::get, operator::todos::fail, operator::todos::retry,
        operator::dead_letters::list,
        operator::webhooks::create, operator::webhooks::list, operator::webhooks::put_rules,
        operator::webhooks::test_rules, intake::ingest,
        operator::quarantine::list, operator::quarantine::release, operator::quarantine::discard,
        operator::hooks::create, operator::hooks::list, operator::hooks::rotate, operator::hooks::enable,
        operator::hooks::disable, operator::hooks::delete,
    ),
    modifiers(&BearerSchemes)
)]
pub struct ApiDoc;

/// Serves the document.
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}
