//! The Webhooks pages' handlers: parse, call [`crate::service::webhooks`], render.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use chrono::Utc;

use super::detail::{WebhookPage, rule_count, saved_rules_text, webhook_page};
use super::form::{RulesForm, WebhookForm};
use super::paths;
use super::view::{Created, created_page, webhooks_page};
use crate::board::error::BoardError;
use crate::board::extract::Posted;
use crate::board::forms;
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::owners::Owners;
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::db::models::EndpointRow;
use crate::domain::ids::WebhookId;
use crate::domain::todo_state::EndpointState;
use crate::error::Error;
use crate::service::webhooks::{self, RuleTestAnswer, Sample};
use crate::service::{Services, endpoints};
use crate::store::webhooks::WebhookRow;

async fn list_page(
    s: &Services,
    human: &Human,
    form: &WebhookForm,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let rows = webhooks::list(s, &human.reach).await?;
    let endpoints = endpoints::list(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let usable: Vec<&EndpointRow> = endpoints
        .iter()
        .filter(|e| e.state == EndpointState::Active && owners.administers(e.scope_id))
        .filter(|e| e.expires_at.is_none_or(|at| at > Utc::now()))
        .collect();
    let body = webhooks_page(&rows, &endpoints, &usable, form, error, &human.csrf, Utc::now());
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Webhooks, "Webhooks", body)))
}

/// `GET /webhooks`: the human's webhooks and the create form.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    list_page(&s, &human, &WebhookForm::default(), None, StatusCode::OK).await
}

/// `POST /webhooks`: creates, then shows the ingest URL, ingest token and signing
/// secret once (200, never cached, never in a URL or a cookie); a refusal shows the
/// form again with why, and nothing is created.
pub async fn create(s: web::Data<Services>, posted: Posted<WebhookForm>) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let form = posted.form;
    let created = match form.body() {
        Ok(create) => webhooks::create(&s, &human.reach, create).await,
        Err(e) => Err(e),
    };
    match created {
        Ok(created) => {
            tracing::info!(human = %human.reach.human, webhook = %created.webhook.id, "board: webhook created");
            let ingest_url = created.ingest_url(s.base_url());
            let body = created_page(&Created {
                webhook: &created.webhook,
                ingest_url: &ingest_url,
                ingest_token: &created.ingest_token,
                signing_secret: created.signing_secret.as_deref(),
            });
            Ok(respond::page(&human, layout::page(&human, Nav::Webhooks, "Webhook created", body)))
        }
        Err(e) => {
            let why = forms::refusal(e)?;
            list_page(&s, &human, &form, Some(&why.to_string()), why.status_code()).await
        }
    }
}

/// The webhook's page with `form` in the editor, `error` or `result` above it.
async fn detail_page(
    s: &Services,
    human: &Human,
    webhook: &WebhookRow,
    form: &RulesForm,
    error: Option<&str>,
    result: Option<&RuleTestAnswer>,
    status: StatusCode,
) -> Result<HttpResponse, BoardError> {
    let endpoints = endpoints::list(s, &human.reach).await?;
    let owners = Owners::of(s, human).await?;
    let body = webhook_page(
        &WebhookPage {
            webhook,
            endpoints: &endpoints,
            owner: owners.label(webhook.scope_id),
            may_admin: owners.administers(webhook.scope_id),
            form,
            error,
            result,
            now: Utc::now(),
        },
        &human.csrf,
    );
    let title = format!("Webhook {}", webhook.id);
    Ok(forms::page_with_status(human, status, layout::page(human, Nav::Webhooks, &title, body)))
}

async fn webhook_of(s: &Services, human: &Human, raw: &str) -> Result<WebhookRow, BoardError> {
    let id: WebhookId = parse_id(raw)?;
    Ok(webhooks::show(s, &human.reach, id).await?)
}

/// `GET /webhooks/{id}`: the webhook and its rules.
pub async fn show(s: web::Data<Services>, human: Human, id: web::Path<String>) -> Result<HttpResponse, BoardError> {
    let webhook = webhook_of(&s, &human, &id).await?;
    let form = RulesForm { rules: saved_rules_text(&webhook), ..RulesForm::default() };
    detail_page(&s, &human, &webhook, &form, None, None, StatusCode::OK).await
}

/// `POST /webhooks/{id}/rules`: saves the rules (validated and cached exactly as the
/// operator API's `PUT …/rules`), then back to the page; invalid rules are shown again
/// with why, and nothing is saved.
pub async fn save_rules(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    posted: Posted<RulesForm>,
    id: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let form = posted.form;
    let webhook = webhook_of(&s, &human, &id).await?;
    let saved = match form.rules_json() {
        Ok(Some(rules)) => webhooks::save_rules(&s, &human.reach, webhook.id, &rules).await,
        Ok(None) => {
            Err(Error::invalid("rules", "empty: to route everything to the default queue, save {\"rules\": []}"))
        }
        Err(e) => Err(e),
    };
    match saved {
        Ok(row) => {
            tracing::info!(human = %human.reach.human, webhook = %row.id, "board: webhook rules saved");
            let n = rule_count(&row);
            let text = if n == 1 { "Saved 1 rule.".to_owned() } else { format!("Saved {n} rules.") };
            Ok(respond::see_other_with_notice(&board.cookies, &paths::webhook(row.id), &Notice::done(text)))
        }
        Err(e) => {
            let why = forms::refusal(e)?;
            detail_page(&s, &human, &webhook, &form, Some(&why.to_string()), None, why.status_code()).await
        }
    }
}

/// `POST /webhooks/{id}/rules/test`: the dry run (the operator API's own), shown with
/// the editor as it was. Changes nothing, so it answers with the page itself.
pub async fn test_rules(
    s: web::Data<Services>,
    posted: Posted<RulesForm>,
    id: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let form = posted.form;
    let webhook = webhook_of(&s, &human, &id).await?;
    let sample = (|| {
        Ok::<_, Error>(Sample { rules: form.rules_json()?, headers: form.header_list()?, body: form.body_json()? })
    })();
    let answer = match sample {
        Ok(sample) => webhooks::dry_run(&s, &human.reach, webhook.id, sample).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(answer) => detail_page(&s, &human, &webhook, &form, None, Some(&answer), StatusCode::OK).await,
        Err(e) => {
            let why = forms::refusal(e)?;
            detail_page(&s, &human, &webhook, &form, Some(&why.to_string()), None, why.status_code()).await
        }
    }
}
