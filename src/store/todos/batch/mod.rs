//! The agent's verbs in batches: claim up to `limit` todos, complete or fail many, create
//! many. Each batch is one transaction, and every rule of the single verb holds for each
//! of its todos; the single verbs' judgements are shared, not copied ([`super::finish`]'s
//! `plan_fail`, [`super::explain_miss`], [`super::admitted`], the claim CTEs).
//!
//! A batch of completions or failures answers per item, in order: the row, or the error
//! the single verb would have given. A bad item (unknown, not claimed, a lease token that
//! does not match, an invalid summary) does not fail the others: items are checked
//! before they are written, so a refusal never aborts the transaction. Only a failure
//! of the database fails the batch as a whole.
//!
//! Items naming the same todo twice act one after the other, as singles would: the
//! batch runs in rounds, the k-th mention of each todo in round k ([`rounds`]).
//!
//! Lock order (see [`crate::store`]): a batch of completions or failures locks every
//! todo row it names in one statement, in ascending id order ([`lock_in_id_order`]),
//! before it writes any, so two batches (or a batch and a single verb, which holds one
//! row) never wait on each other in a cycle. A batch claim takes todos as claim-next
//! does (`SKIP LOCKED`, it never waits on one), after the budget rows as any claim. A
//! batch create takes the endpoint row `FOR SHARE` and inserts in idempotency-key order,
//! so two batches racing on the same keys wait on each other in one order.

mod claim;
mod complete;
mod create;
mod each;
mod fail;

pub use claim::BatchClaim;
pub use each::EachClaim;

use diesel::sql_types::{Array, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::Finish;
use super::finish::Checked;
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::{Error, Result};

/// Most todos one claim-next may take (`limit`).
pub const CLAIM_LIMIT_MAX: i32 = 100;

/// Most items of one batch of completions or failures.
pub const FINISH_ITEMS_MAX: usize = 100;

/// Most items of one batch create.
pub const CREATE_ITEMS_MAX: usize = 500;

/// The answer for one item of a batch: what the single verb would have answered.
pub type ItemResult<T> = Result<T>;

/// The indices of `ids`, in rounds: round k holds the k-th mention of each id, in the
/// order of the items (an item without a todo id is in none). Ids of one round are
/// distinct, and every id of a later round is in round 0.
pub(crate) fn rounds(ids: &[Option<TodoId>]) -> Vec<Vec<usize>> {
    let mut seen: std::collections::HashMap<TodoId, usize> = std::collections::HashMap::new();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(id) = id else { continue };
        let k = seen.entry(*id).or_insert(0);
        if rounds.len() <= *k {
            rounds.push(Vec::new());
        }
        rounds[*k].push(i);
        *k += 1;
    }
    rounds
}

/// One item of a batch of completions or failures, its body checked as the single verb
/// checks it, with the result it reports.
pub(crate) struct Item {
    pub(crate) id: TodoId,
    pub(crate) result: Option<serde_json::Value>,
    pub(crate) checked: Checked,
}

/// Checks every item as the single verb would: its id (one that is not a todo id at all
/// is `not_found`, as on the single verb's path), then its body ([`Finish::check`]). A
/// refused item is answered here and left out (`None` in its place); the others wait for
/// their round. Also answers the items' ids, in order.
pub(crate) fn check_items<T>(
    items: Vec<(Option<TodoId>, Finish)>,
    answers: &mut Answers<T>,
) -> (Vec<Option<TodoId>>, Vec<Option<Item>>) {
    let ids = items.iter().map(|(id, _)| *id).collect();
    let checked = items
        .into_iter()
        .enumerate()
        .map(|(i, (id, finish))| {
            let item = id.ok_or(Error::NotFound).and_then(|id| {
                let checked = finish.check()?;
                Ok(Item { id, result: finish.result, checked })
            });
            match item {
                Ok(item) => Some(item),
                Err(e) => {
                    answers.set(i, Err(e));
                    None
                }
            }
        })
        .collect();
    (ids, checked)
}

/// Locks the endpoint's todos among `ids` (quarantine never: it is out of an agent's
/// reach) in ascending id order and returns them. `FOR UPDATE`, as the single verbs'
/// transitions lock their one row; rows locked by another transaction are waited for.
pub(crate) async fn lock_in_id_order(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    ids: &[Option<TodoId>],
) -> Result<Vec<TodoRow>> {
    let mut unique: Vec<uuid::Uuid> = ids.iter().flatten().map(|i| i.0).collect();
    unique.sort_unstable();
    unique.dedup();
    let q = LOCK_IN_ID_ORDER.query().bind::<Array<SqlUuid>, _>(unique).bind::<SqlUuid, _>(endpoint.0);
    Ok(Prepared(q).load(conn).await?)
}

statement! {
    /// The todos `$1` of endpoint `$2` (quarantine never), locked in ascending id order.
    static LOCK_IN_ID_ORDER = "SELECT t.* FROM todos t WHERE t.id = ANY($1) AND t.endpoint_id = $2 AND t.queue <> 'quarantine' \
         ORDER BY t.id FOR UPDATE";
}

/// An item's refusal, or the whole batch's failure: a refusal of the database itself
/// (internal, unavailable) is not an item's answer, it ends the transaction.
pub(crate) fn item_error(e: Error) -> Result<Error> {
    match e {
        Error::Internal(_) | Error::Unavailable(_) => Err(e),
        refusal => Ok(refusal),
    }
}

/// Collects per-item answers filled out of order into their item order.
pub(crate) struct Answers<T> {
    slots: Vec<Option<ItemResult<T>>>,
}

impl<T> Answers<T> {
    /// Room for `n` answers.
    pub(crate) fn new(n: usize) -> Self {
        Answers { slots: (0..n).map(|_| None).collect() }
    }

    /// The answer of item `i`.
    pub(crate) fn set(&mut self, i: usize, answer: ItemResult<T>) {
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Some(answer);
        }
    }

    /// Every answer, in item order; an item left without one is an internal error.
    pub(crate) fn into_vec(self) -> Result<Vec<ItemResult<T>>> {
        self.slots.into_iter().map(|s| s.ok_or_else(|| Error::internal("a batch item was left unanswered"))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_todo_named_twice_is_acted_on_in_a_later_round() {
        let (a, b) = (Some(TodoId::new()), Some(TodoId::new()));
        assert_eq!(rounds(&[a, b, a, a, b]), vec![vec![0, 1], vec![2, 4], vec![3]]);
        assert!(rounds(&[]).is_empty());
    }

    #[test]
    fn an_item_without_a_todo_id_is_in_no_round_and_answered_not_found_before_its_body() {
        let a = Some(TodoId::new());
        assert_eq!(rounds(&[None, a, None, a]), vec![vec![1], vec![3]]);
        let bad_body = Finish { artifact: Some("ftp://nope".into()), ..Finish::default() };
        let mut answers: Answers<()> = Answers::new(3);
        let (ids, checked) =
            check_items(vec![(None, bad_body), (a, Finish::default()), (None, Finish::default())], &mut answers);
        assert_eq!(ids, vec![None, a, None]);
        assert_eq!(checked.iter().map(Option::is_some).collect::<Vec<_>>(), vec![false, true, false]);
        answers.set(1, Ok(()));
        let codes: Vec<_> = answers.into_vec().unwrap().iter().map(|a| a.as_ref().err().map(Error::code)).collect();
        assert_eq!(codes, vec![Some("not_found"), None, Some("not_found")]);
    }

    #[test]
    fn only_a_database_failure_fails_the_whole_batch() {
        assert!(item_error(Error::NotFound).is_ok());
        assert!(item_error(Error::Conflict("x".into())).is_ok());
        assert!(item_error(Error::Unavailable("x".into())).is_err());
        assert!(item_error(Error::internal("x")).is_err());
    }
}
