//! The Endpoints pages' handlers: parse, call [`crate::service::endpoints`], render.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use chrono::Utc;

use super::detail::{EndpointPage, endpoint_page, revoke_page};
use super::form::VendForm;
use super::paths;
use super::view::{endpoints_page, vended_page};
use crate::board::error::BoardError;
use crate::board::extract::NoFields;
use crate::board::extract::Posted;
use crate::board::forms;
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::owners::Owners;
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::domain::ids::EndpointId;
use crate::error::Error;
use crate::hooks::service as hooks;
use crate::service::{Services, endpoints, webhooks};

async fn list_page(
    s: &Services,
    human: &Human,
    form: &VendForm,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let rows = endpoints::list(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let body = endpoints_page(&rows, &owners, form, error, &human.csrf, Utc::now());
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Endpoints, "Endpoints", body)))
}

/// `GET /endpoints`: the human's endpoints and the vend form.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    list_page(&s, &human, &VendForm::default(), None, StatusCode::OK).await
}

/// `POST /endpoints`: vends, then shows the token once (200, never cached, never in a
/// URL or a cookie); a refusal shows the form again with why, and nothing is created.
pub async fn vend(s: web::Data<Services>, posted: Posted<Vec<(String, String)>>) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let form = VendForm::from_pairs(&posted.form);
    let vended = match form.body() {
        Ok(vend) => endpoints::vend(&s, &human.reach, vend).await,
        Err(e) => Err(e),
    };
    match vended {
        Ok(vended) => {
            tracing::info!(human = %human.reach.human, endpoint = %vended.endpoint.id, "board: endpoint vended");
            let owners = Owners::of(&s, &human).await?;
            let body = vended_page(&vended.endpoint, &vended.token, &owners);
            Ok(respond::page(&human, layout::page(&human, Nav::Endpoints, "Endpoint vended", body)))
        }
        Err(e) => {
            let why = forms::refusal(e)?;
            let status = why.status_code();
            list_page(&s, &human, &form, Some(&why.to_string()), status).await
        }
    }
}

/// `GET /endpoints/{id}`.
pub async fn show(s: web::Data<Services>, human: Human, id: web::Path<String>) -> Result<HttpResponse, BoardError> {
    let id: EndpointId = parse_id(&id)?;
    let endpoint = endpoints::show(&s, &human.reach, id).await?;
    let webhooks: Vec<_> =
        webhooks::list(&s, &human.reach).await?.into_iter().filter(|w| w.endpoint_id == id).collect();
    let hooks = hooks::list(&s, &human.reach, id).await?;
    let owners = Owners::of(&s, &human).await?;
    let body = endpoint_page(&EndpointPage {
        endpoint: &endpoint,
        owner: owners.label(endpoint.scope_id),
        may_admin: owners.administers(endpoint.scope_id),
        webhooks: &webhooks,
        hooks: &hooks,
        now: Utc::now(),
    });
    Ok(respond::page(&human, layout::page(&human, Nav::Endpoints, &endpoint.slug, body)))
}

/// `GET /endpoints/{id}/revoke`: the confirmation, with what revoking dead-letters.
pub async fn confirm_revoke(
    s: web::Data<Services>,
    human: Human,
    id: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let id: EndpointId = parse_id(&id)?;
    let (endpoint, held) = endpoints::held_work(&s, &human.reach, id).await?;
    let body = revoke_page(&endpoint, &held, &human.csrf);
    let title = format!("Revoke {}", endpoint.slug);
    Ok(respond::page(&human, layout::page(&human, Nav::Endpoints, &title, body)))
}

/// `POST /endpoints/{id}/revoke`: revokes (as the operator API does) and reports how
/// many todos became dead letters on the endpoint's page.
pub async fn revoke(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    posted: Posted<NoFields>,
    id: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: EndpointId = parse_id(&id)?;
    let notice = match endpoints::revoke(&s, &human.reach, id).await {
        Ok(revoked) => {
            tracing::info!(human = %human.reach.human, endpoint = %id, dead_lettered = revoked.dead_lettered, "board: endpoint revoked");
            Notice::done(match revoked.dead_lettered {
                0 => "Revoked. It held no work.".to_owned(),
                1 => "Revoked. 1 todo it held is now a dead letter.".to_owned(),
                n => format!("Revoked. {n} todos it held are now dead letters."),
            })
        }
        Err(Error::Conflict(why)) => Notice::warn(format!("Not revoked: {why}.")),
        Err(e) => return Err(e.into()),
    };
    Ok(respond::see_other_with_notice(&board.cookies, &paths::endpoint(id), &notice))
}
