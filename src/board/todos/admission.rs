//! `POST /todos/queues/admission`: the admission panel's forms (pause, resume, limits, a
//! new budget), through [`crate::service::admission::set`], the service the operator
//! API's `PUT /api/v1/endpoints/{id}/queues/{queue}/admission` calls. A field left out
//! of the form is unchanged; a limit left empty is lifted. Answers 303 back to the list
//! with a notice; what was typed wrong is said there and nothing changes; an endpoint
//! outside the human's scopes is not found, one they do not administer is refused (403).

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::super::error::BoardError;
use super::super::extract::Posted;
use super::super::ids::parse_id;
use super::super::respond::{self, Notice};
use super::paths::ADMISSION_ANCHOR;
use super::retry::ReturnTo;
use crate::board::state::BoardState;
use crate::domain::admission::{AdmissionChange, Change};
use crate::domain::ids::EndpointId;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::admission::{self, QueueBudget};

/// The panel's form fields (each form sends some of them).
#[derive(Debug, Default, Deserialize)]
pub struct AdmissionForm {
    /// The endpoint (`ep_…`).
    #[serde(default)]
    pub endpoint_id: String,
    /// The queue.
    #[serde(default)]
    pub queue: String,
    /// `true` or `false`; absent: unchanged.
    pub paused: Option<String>,
    /// A whole number, or empty for no cap; absent: unchanged.
    pub max_in_flight: Option<String>,
    /// A whole number, or empty for no cap; absent: unchanged.
    pub per_hour: Option<String>,
    /// The pill to return to.
    #[serde(default)]
    pub filter: String,
    /// The search to return to.
    #[serde(default)]
    pub q: String,
}

fn limit(field: &str, raw: Option<&str>) -> Result<Change<Option<i32>>> {
    match raw.map(str::trim) {
        None => Ok(Change::Keep),
        Some("") => Ok(Change::Set(None)),
        Some(raw) => {
            raw.parse().map(|n| Change::Set(Some(n))).map_err(|_| Error::invalid(field, "must be a whole number"))
        }
    }
}

impl AdmissionForm {
    /// The change the form asks for.
    pub fn change(&self) -> Result<AdmissionChange> {
        let paused = match self.paused.as_deref().map(str::trim) {
            None | Some("") => Change::Keep,
            Some("true") => Change::Set(true),
            Some("false") => Change::Set(false),
            Some(_) => return Err(Error::invalid("paused", "must be true or false")),
        };
        Ok(AdmissionChange {
            paused,
            max_in_flight: limit("max_in_flight", self.max_in_flight.as_deref())?,
            per_hour: limit("per_hour", self.per_hour.as_deref())?,
        })
    }
}

/// What the budget is now, as a sentence.
fn said(s: &QueueBudget) -> String {
    let b = s.budget;
    if !b.restricts() {
        return format!("The queue {} admits every claim: it has no budget.", s.queue);
    }
    let mut parts = vec![if b.paused { "is paused".to_owned() } else { "admits claims".to_owned() }];
    if let Some(n) = b.max_in_flight {
        parts.push(format!("at most {n} claimed at once"));
    }
    if let Some(n) = b.per_hour {
        parts.push(format!("at most {n} claims an hour"));
    }
    format!("The queue {} {}.", s.queue, parts.join(", "))
}

/// `POST /todos/queues/admission`.
pub async fn set_admission(
    posted: Posted<AdmissionForm>,
    s: web::Data<Services>,
    board: web::Data<BoardState>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let endpoint: EndpointId = parse_id(form.endpoint_id.trim())?;
    let changed = match form.change() {
        Ok(change) => admission::set(&s, &human.reach, endpoint, form.queue.trim(), change).await,
        Err(e) => Err(e),
    };
    let notice = match changed {
        Ok(settings) => Notice::done(said(&settings)),
        Err(Error::InvalidArgument(why)) => Notice::warn(format!("Not changed: {why}")),
        Err(e) => return Err(e.into()),
    };
    let back = ReturnTo { filter: form.filter, q: form.q };
    let location = format!("{}#{ADMISSION_ANCHOR}", back.location());
    Ok(respond::see_other_with_notice(&board.cookies, &location, &notice))
}
