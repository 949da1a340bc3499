//! The Digests pages' handlers: parse, call [`crate::digests::service`] (the same
//! service the operator API takes; the sinks and connections it names come from
//! [`crate::sinks::service`] and [`crate::sinks::service::connections`]), render. A digest
//! outside the human's scopes answers 404; changing one in a team they do not
//! administer answers 403. A refusal about what was typed shows the page again with why
//! beside the form, and nothing changes.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use chrono::Utc;

use super::detail::{DigestPage, digest_page};
use super::form::DigestForm;
use super::format::{in_utc, in_zone};
use super::paths;
use super::preview::{PreviewPage, preview_page};
use super::view::{DigestsView, RefusedDigestForm, digests_page};
use crate::board::error::BoardError;
use crate::board::extract::{NoFields, Posted};
use crate::board::forms;
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::owners::Owners;
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::sinks::handlers::explain;
use crate::board::state::BoardState;
use crate::digests::service as digests;
use crate::digests::statements::{DigestRow, RunRow};
use crate::domain::ids::DigestId;
use crate::error::Error;
use crate::service::Services;
use crate::sinks::service as sinks;
use crate::sinks::service::connections;

/// Every digest of the human's scopes with its recent send times. A digest deleted
/// between the listing and its send times is left out.
async fn with_runs(s: &Services, human: &Human) -> Result<Vec<(DigestRow, Vec<RunRow>)>, BoardError> {
    let mut out = Vec::new();
    for d in digests::list(s, &human.reach).await? {
        match digests::show(s, &human.reach, d.id).await {
            Ok(shown) => out.push(shown),
            Err(Error::NotFound) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

async fn list_page(
    s: &Services,
    human: &Human,
    refused: Option<(&RefusedDigestForm, &str)>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let digests = with_runs(s, human).await?;
    let sinks = sinks::list(s, &human.reach).await?;
    let connections = connections::list(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let v = DigestsView {
        digests: &digests,
        sinks: &sinks,
        connections: &connections,
        owners: &owners,
        refused,
        now: Utc::now(),
    };
    let body = digests_page(&v, &human.csrf);
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Digests, "Digests", body)))
}

/// The list page again with `e` beside the form `which`, if `e` is about what was
/// typed; anything else is the Board's usual refusal page.
async fn refused(s: &Services, human: &Human, which: RefusedDigestForm, e: Error) -> Result<HttpResponse, BoardError> {
    let why = forms::refusal(e)?;
    list_page(s, human, Some((&which, &explain(&why))), why.status_code()).await
}

fn done(board: &BoardState, location: &str, text: String) -> HttpResponse {
    respond::see_other_with_notice(&board.cookies, location, &Notice::done(text))
}

fn next_send(d: &DigestRow) -> String {
    format!("{} ({})", in_zone(&d.schedule, d.next_send_at), in_utc(d.next_send_at))
}

/// `GET /digests`: every digest of the human's scopes, with the add form for the
/// scopes they administer.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    list_page(&s, &human, None, StatusCode::OK).await
}

/// `POST /digests`: schedules a digest, then on to its page.
pub async fn create(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    posted: Posted<Vec<(String, String)>>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let form = DigestForm::from_pairs(&posted.form);
    let created = match form.input() {
        Ok(input) => digests::create(&s, &human.reach, input).await,
        Err(e) => Err(e),
    };
    match created {
        Ok(d) => {
            tracing::info!(human = %human.reach.human, digest = %d.id, "board: digest scheduled");
            let text = format!("Scheduled the digest {}; it is next sent {}.", d.name, next_send(&d));
            Ok(done(&board, &paths::digest(d.id), text))
        }
        Err(e) => refused(&s, &human, RefusedDigestForm::NewDigest(form), e).await,
    }
}

async fn detail_page(
    s: &Services,
    human: &Human,
    id: DigestId,
    typed: Option<&DigestForm>,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let (digest, runs) = digests::show(s, &human.reach, id).await?;
    let sinks = sinks::list(s, &human.reach).await?;
    let connections = connections::list(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let saved = DigestForm::from_row(&digest);
    let body = digest_page(
        &DigestPage {
            digest: &digest,
            runs: &runs,
            owner: owners.label(digest.scope_id),
            sinks: &sinks,
            connections: &connections,
            may_admin: owners.administers(digest.scope_id),
            form: typed.unwrap_or(&saved),
            error,
            now: Utc::now(),
        },
        &human.csrf,
    );
    let title = format!("Digest {}", digest.name);
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Digests, &title, body)))
}

/// `GET /digests/{id}`: the digest, its recent send times, and (for an admin) the
/// edit form.
pub async fn show(s: web::Data<Services>, human: Human, path: web::Path<String>) -> Result<HttpResponse, BoardError> {
    let id: DigestId = parse_id(&path)?;
    detail_page(&s, &human, id, None, None, StatusCode::OK).await
}

/// `POST /digests/{id}/update`: replaces the digest with the form's contents (as the
/// API's `PUT`), then back to its page; a refused form is shown again with why, and
/// nothing changes.
pub async fn update(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<Vec<(String, String)>>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: DigestId = parse_id(&path)?;
    let form = DigestForm::from_pairs(&posted.form);
    let replaced = match form.input() {
        Ok(input) => digests::replace(&s, &human.reach, id, input).await,
        Err(e) => Err(e),
    };
    match replaced {
        Ok(d) => {
            tracing::info!(human = %human.reach.human, digest = %d.id, "board: digest replaced");
            let text = format!("Saved the digest {}; it is next sent {}.", d.name, next_send(&d));
            Ok(done(&board, &paths::digest(d.id), text))
        }
        Err(e) => {
            let why = forms::refusal(e)?;
            detail_page(&s, &human, id, Some(&form), Some(&explain(&why)), why.status_code()).await
        }
    }
}

/// `POST /digests/{id}/delete` (the page asks first): the digest and the record of its
/// send times.
pub async fn delete(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: DigestId = parse_id(&path)?;
    match digests::delete(&s, &human.reach, id).await {
        Ok(()) => {
            tracing::info!(human = %human.reach.human, digest = %id, "board: digest deleted");
            Ok(done(&board, paths::DIGESTS, "Deleted the digest and the record of its send times.".to_owned()))
        }
        Err(e) => refused(&s, &human, RefusedDigestForm::Digest(id), e).await,
    }
}

/// `GET /digests/{id}/preview`: what the digest would say now (measured now, sent
/// nowhere, recorded nowhere).
pub async fn preview(
    s: web::Data<Services>,
    human: Human,
    path: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let id: DigestId = parse_id(&path)?;
    let (digest, _) = digests::show(&s, &human.reach, id).await?;
    let composed = digests::preview(&s, &human.reach, id).await?;
    let owners = Owners::of(&s, &human).await?;
    let body = preview_page(&PreviewPage {
        digest: &digest,
        owner: owners.label(digest.scope_id),
        composed: &composed,
        now: Utc::now(),
    });
    let title = format!("Preview of {}", digest.name);
    Ok(respond::page(&human, layout::page(&human, Nav::Digests, &title, body)))
}
