//! The Sinks pages' handlers: parse, call [`crate::sinks::service::connections`] and
//! [`crate::sinks::service`] (the same services the operator API takes), render. A
//! connection or sink outside the human's scopes answers 404; changing one in a team
//! they do not administer answers 403. A refusal about what was typed shows the page
//! again with why beside the form, and nothing changes. Secrets are never logged, put
//! in a URL or shown back.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use chrono::Utc;

use super::form::{ConnectionForm, RotateForm, SinkForm, SubscriptionsForm, UpdateForm, saved_text};
use super::paths;
use super::view::{RefusedSinkForm, SinkPage, SinksView, sink_page, sinks_page};
use crate::board::error::BoardError;
use crate::board::extract::{NoFields, Posted};
use crate::board::forms;
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::owners::Owners;
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::domain::ids::{ConnectionId, SinkId};
use crate::error::Error;
use crate::service::Services;
use crate::sinks::service as sinks;
use crate::sinks::service::connections;
use crate::sinks::statements::SinkRow;

/// Most send-log rows a sink's page shows.
pub const SEND_LOG_LIMIT: i64 = 100;

async fn list_page(
    s: &Services,
    human: &Human,
    refused: Option<(&RefusedSinkForm, &str)>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let connections = connections::list(s, &human.reach).await?;
    let sinks = sinks::list(s, &human.reach).await?;
    let subscriptions = sinks::subscription_counts(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let v = SinksView {
        connections: &connections,
        sinks: &sinks,
        subscriptions: &subscriptions,
        owners: &owners,
        refused,
        now: Utc::now(),
    };
    let body = sinks_page(&v, &human.csrf);
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Sinks, "Sinks", body)))
}

/// A refusal as the page shows it: its stable code (`reference_out_of_scope`,
/// `forbidden_scheme`, …) and its message, which names no secret.
pub fn explain(e: &Error) -> String {
    let message = e.to_string();
    if message.starts_with(e.code()) { message } else { format!("{}: {message}", e.code()) }
}

/// The list page again with `e` beside the form `which`, if `e` is about what was
/// typed; anything else is the Board's usual refusal page.
async fn refused(s: &Services, human: &Human, which: RefusedSinkForm, e: Error) -> Result<HttpResponse, BoardError> {
    let why = forms::refusal(e)?;
    list_page(s, human, Some((&which, &explain(&why))), why.status_code()).await
}

fn done(board: &BoardState, location: &str, text: String) -> HttpResponse {
    respond::see_other_with_notice(&board.cookies, location, &Notice::done(text))
}

/// `GET /sinks`: connections and sinks, with the forms of the scopes the human administers.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    list_page(&s, &human, None, StatusCode::OK).await
}

/// `POST /sinks/connections`: stores a connection, then back to the page, which shows
/// its fingerprint (never the secret).
pub async fn create_connection(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    posted: Posted<ConnectionForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let created = match form.body() {
        Ok(c) => connections::create(&s, &human.reach, c).await,
        Err(e) => Err(e),
    };
    match created {
        Ok(row) => {
            tracing::info!(human = %human.reach.human, connection = %row.id, "board: connection stored");
            let text = format!("Stored the connection {} (fingerprint {}).", row.name, row.fingerprint);
            Ok(done(&board, paths::SINKS, text))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::NewConnection(form.without_secret()), e).await,
    }
}

/// `POST /sinks/connections/{id}/rotate`: replaces the secret; the notice names the
/// new fingerprint.
pub async fn rotate_connection(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<RotateForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: ConnectionId = parse_id(&path)?;
    match connections::rotate(&s, &human.reach, id, &form.secret, form.destination()).await {
        Ok(row) => {
            tracing::info!(human = %human.reach.human, connection = %row.id, "board: connection rotated");
            let text = format!("Replaced the secret of {} (fingerprint now {}).", row.name, row.fingerprint);
            Ok(done(&board, paths::SINKS, text))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::Connection(id), e).await,
    }
}

/// `POST /sinks/connections/{id}/delete` (the page asks first; refused while a sink
/// posts with it).
pub async fn delete_connection(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: ConnectionId = parse_id(&path)?;
    match connections::delete(&s, &human.reach, id).await {
        Ok(()) => {
            tracing::info!(human = %human.reach.human, connection = %id, "board: connection deleted");
            Ok(done(&board, paths::SINKS, "Deleted the connection.".to_owned()))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::Connection(id), e).await,
    }
}

/// `POST /sinks/connections/{id}/test`: asks a cairn connection's Cairn who its token
/// is; back to the page with ok or the error class.
pub async fn test_connection(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: ConnectionId = parse_id(&path)?;
    let notice = match connections::test(&s, &human.reach, id).await {
        Ok(None) => Notice::done("Test passed: the Cairn knows the token."),
        Ok(Some((code, message))) => Notice::warn(format!("Test failed ({code}): {message}.")),
        Err(e) => return refused(&s, &human, RefusedSinkForm::Connection(id), e).await,
    };
    Ok(respond::see_other_with_notice(&board.cookies, paths::SINKS, &notice))
}

/// `POST /sinks`: adds a sink, then back to the page.
pub async fn create_sink(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    posted: Posted<SinkForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let created = match form.body() {
        Ok(c) => sinks::create(&s, &human.reach, c).await,
        Err(e) => Err(e),
    };
    match created {
        Ok((row, subs)) => {
            tracing::info!(human = %human.reach.human, sink = %row.id, "board: sink added");
            let text = if subs.is_empty() {
                format!("Added the sink {}. It hears nothing until it has subscriptions.", row.name)
            } else {
                format!(
                    "Added the sink {}. It hears dead letters (todo.dead_lettered, relay.exhausted) on every queue; \
                     change its subscriptions below.",
                    row.name
                )
            };
            Ok(done(&board, &paths::sink(row.id), text))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::NewSink(form), e).await,
    }
}

/// `POST /sinks/{id}/update`: switches a sink on or off, or changes its budget.
pub async fn update_sink(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<UpdateForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: SinkId = parse_id(&path)?;
    let updated = match form.change() {
        Ok(change) => sinks::update(&s, &human.reach, id, change).await,
        Err(e) => Err(e),
    };
    match updated {
        Ok(row) => {
            let text = match form.enabled.as_deref() {
                Some("true") => format!("Enabled the sink {}.", row.name),
                Some("false") => format!("Disabled the sink {}; nothing is sent to it until it is enabled.", row.name),
                _ => format!("The sink {} now sends {} an hour, burst {}.", row.name, row.budget_per_hour, row.burst),
            };
            Ok(done(&board, paths::SINKS, text))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::Sink(id), e).await,
    }
}

/// `POST /sinks/{id}/delete` (the page asks first).
pub async fn delete_sink(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: SinkId = parse_id(&path)?;
    match sinks::delete(&s, &human.reach, id).await {
        Ok(()) => {
            tracing::info!(human = %human.reach.human, sink = %id, "board: sink deleted");
            Ok(done(&board, paths::SINKS, "Deleted the sink and its subscriptions.".to_owned()))
        }
        Err(e) => refused(&s, &human, RefusedSinkForm::Sink(id), e).await,
    }
}

/// `POST /sinks/{id}/test`: one harmless message; back to the page with ok or the
/// error class (or, past six a minute, that it was not sent).
pub async fn test_sink(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: SinkId = parse_id(&path)?;
    let notice = match sinks::test(&s, &human.reach, id).await {
        Ok(t) if t.subscriptions == 0 => {
            let found = match t.found {
                None => "Test sent: the sink took the message".to_owned(),
                Some((code, message)) => format!("Test failed ({code}): {message}"),
            };
            Notice::warn(format!("{found}. But {}.", sinks::HEARS_NOTHING))
        }
        Ok(sinks::TestSend { found: None, .. }) => Notice::done("Test sent: the sink took the message."),
        Ok(sinks::TestSend { found: Some((code, message)), .. }) => {
            Notice::warn(format!("Test failed ({code}): {message}."))
        }
        Err(e @ Error::RateLimited { .. }) => Notice::warn(format!("Test not sent: {}", explain(&e))),
        Err(e) => return Err(e.into()),
    };
    Ok(respond::see_other_with_notice(&board.cookies, paths::SINKS, &notice))
}

async fn detail_page(
    s: &Services,
    human: &Human,
    sink: &SinkRow,
    hears_nothing: bool,
    editor: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let sends = sinks::sends(s, &human.reach, sink.id, SEND_LOG_LIMIT).await?;
    let owners = Owners::of(s, human).await?;
    let connections = connections::list(s, &human.reach).await?;
    let connection = connections.iter().find(|c| c.id == sink.connection_id).map_or("(unknown)", |c| c.name.as_str());
    let body = sink_page(
        &SinkPage {
            sink,
            owner: owners.label(sink.scope_id),
            connection,
            may_admin: owners.administers(sink.scope_id),
            hears_nothing,
            editor,
            error,
            sends: &sends,
            now: Utc::now(),
        },
        &human.csrf,
    );
    let title = format!("Sink {}", sink.name);
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Sinks, &title, body)))
}

/// `GET /sinks/{id}`: the sink, its subscriptions and its send log.
pub async fn show(s: web::Data<Services>, human: Human, path: web::Path<String>) -> Result<HttpResponse, BoardError> {
    let id: SinkId = parse_id(&path)?;
    let (sink, subs) = sinks::subscriptions(&s, &human.reach, id).await?;
    detail_page(&s, &human, &sink, subs.is_empty(), &saved_text(&subs), None, StatusCode::OK).await
}

/// `POST /sinks/{id}/subscriptions`: replaces the subscriptions (validated exactly as
/// the operator API's `PUT …/subscriptions`), then back to the page; a refused set is
/// shown again with why, and nothing is saved.
pub async fn save_subscriptions(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<SubscriptionsForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: SinkId = parse_id(&path)?;
    let (sink, saved_subs) = sinks::subscriptions(&s, &human.reach, id).await?;
    let saved = match form.subscriptions() {
        Ok(subs) => sinks::set_subscriptions(&s, &human.reach, id, subs).await,
        Err(e) => Err(e),
    };
    match saved {
        Ok(rows) => {
            tracing::info!(human = %human.reach.human, sink = %id, "board: sink subscriptions saved");
            let n = rows.len();
            let text = if n == 1 { "Saved 1 subscription.".to_owned() } else { format!("Saved {n} subscriptions.") };
            Ok(done(&board, &paths::sink(id), text))
        }
        Err(e) => {
            let why = forms::refusal(e)?;
            let hears_nothing = saved_subs.is_empty();
            detail_page(&s, &human, &sink, hears_nothing, &form.subscriptions, Some(&explain(&why)), why.status_code())
                .await
        }
    }
}
