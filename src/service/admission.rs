//! Admission budgets per (endpoint, queue): pause or resume a queue, cap how many of its
//! todos are claimed at once and how many claims it admits per clock hour (SPEC sections
//! 11 and 13). The operator API and the Board's Todos view both change budgets through
//! [`set`]. Changing one takes an admin of the endpoint's scope (a member: 403; anyone
//! else: 404, like an endpoint that does not exist); seeing them, a member.

use super::Services;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::domain::admission::{AdmissionChange, Budget, check_queue};
use crate::domain::ids::EndpointId;
use crate::error::Result;
use crate::store::admission::AdmissionRow;
use crate::store::tenancy::Reach;

/// One queue's budget as the API answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueBudget {
    /// The endpoint.
    pub endpoint_id: EndpointId,
    /// The queue.
    pub queue: String,
    /// The budget (all defaults: none).
    pub budget: Budget,
}

/// Applies `change` to the budget of the endpoint's `queue` and answers the settings
/// after it. Refused, with nothing changed: an endpoint outside the caller's scopes
/// (404), a scope they do not administer (403), a queue name no agent could drain or a
/// limit out of bounds (422, naming the field).
pub async fn set(
    s: &Services,
    who: &Reach,
    endpoint: EndpointId,
    queue: &str,
    change: AdmissionChange,
) -> Result<QueueBudget> {
    let found = s.store.endpoint_in(&who.scope_ids(), endpoint).await?;
    check(Action::SetAdmission, Principal::Human(who), Some(Place::scope(found.scope_id)))?;
    check_queue(queue)?;
    change.validate()?;
    let budget = s.store.set_admission(endpoint, queue, change, Some(who.human)).await?;
    tracing::info!(human = %who.human, endpoint = %endpoint, queue, paused = budget.paused,
        max_in_flight = ?budget.max_in_flight, per_hour = ?budget.per_hour, "admission budget changed");
    Ok(QueueBudget { endpoint_id: endpoint, queue: queue.to_owned(), budget })
}

/// The budgets of one endpoint's queues (in the caller's scopes, else 404).
pub async fn of_endpoint(s: &Services, who: &Reach, endpoint: EndpointId) -> Result<Vec<AdmissionRow>> {
    let found = s.store.endpoint_in(&who.scope_ids(), endpoint).await?;
    check(Action::ListAdmission, Principal::Human(who), Some(Place::scope(found.scope_id)))?;
    s.store.admission_of(endpoint).await
}

/// The budgets of every endpoint in the caller's scopes (the Board's Todos view).
pub async fn in_scopes(s: &Services, who: &Reach) -> Result<Vec<AdmissionRow>> {
    check(Action::ListAdmission, Principal::Human(who), None)?;
    s.store.admission_in(&who.scope_ids()).await
}
