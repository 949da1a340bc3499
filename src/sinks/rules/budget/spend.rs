//! How one pass over a sink divides its rows under the budget (the policy half of
//! `Store::plan_sink`, whose statements lock, read and write them): the stored bucket
//! decides ([`decide`]), then the due rows and the held rows split into what goes out
//! one by one, what goes out as one coalesced message, and what stays held. Generic over
//! the row, so it stays pure.

use chrono::{DateTime, Utc};

use super::{BucketState, BudgetDecision, decide};

/// A sink's budget as its row stores it, read under the row's lock.
#[derive(Debug, Clone, Copy)]
pub struct StoredBudget {
    /// The bucket.
    pub state: BucketState,
    /// `budget_per_hour` (below 0 reads as 1).
    pub per_hour: i32,
    /// `burst` (below 0 reads as 1).
    pub burst: i32,
    /// The database's clock when it was read.
    pub now: DateTime<Utc>,
}

impl StoredBudget {
    /// The bucket after this pass and the budget's decision, for `held` rows already
    /// held and `due` rows newly due.
    pub fn decide(&self, held: usize, due: usize) -> (BucketState, BudgetDecision) {
        let per_hour = u32::try_from(self.per_hour).unwrap_or(1);
        let burst = u32::try_from(self.burst).unwrap_or(1);
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        decide(self.state, self.now, per_hour, burst, count(held), count(due))
    }
}

/// The rows of one pass, divided by a [`BudgetDecision`].
#[derive(Debug, PartialEq, Eq)]
pub struct Spending<R> {
    /// Due rows sent one by one, oldest first.
    pub individual: Vec<R>,
    /// When the budget sends held rows as themselves (a lone held row): those rows,
    /// claimed again for this pass (possibly none).
    pub lone: Option<Vec<R>>,
    /// The due rows left: coalesced, or newly held.
    pub due: Vec<R>,
    /// The held rows left: coalesced, or still held.
    pub held: Vec<R>,
    /// Whether `held` and `due` go out as one coalesced message (else they are held).
    pub coalesce: bool,
}

/// Divides `due` (this pass's rows, oldest first) and `held` (the sink's held rows,
/// oldest first) as `decision` says: each token the decision spends one by one goes to
/// a due row, then (with nothing to coalesce) to a held row.
pub fn spend<R>(decision: &BudgetDecision, mut due: Vec<R>, mut held: Vec<R>) -> Spending<R> {
    let wanted = decision.send_individually as usize;
    let individual: Vec<R> = due.drain(..wanted.min(due.len())).collect();
    let coalesce = decision.coalesce.is_some();
    let lone = (individual.len() < wanted && !coalesce)
        .then(|| held.drain(..(wanted - individual.len()).min(held.len())).collect());
    Spending { individual, lone, due, held, coalesce }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(send_individually: u32, coalesce: Option<u32>) -> BudgetDecision {
        BudgetDecision { send_individually, coalesce, hold: 0, wake_at: None }
    }

    #[test]
    fn tokens_go_to_due_rows_first_and_the_rest_stay_due() {
        let s = spend(&decision(2, None), vec![1, 2, 3], vec![]);
        assert_eq!(s, Spending { individual: vec![1, 2], lone: None, due: vec![3], held: vec![], coalesce: false });
    }

    #[test]
    fn a_lone_held_row_goes_out_as_itself() {
        let s = spend(&decision(1, None), Vec::<i32>::new(), vec![9]);
        assert_eq!(s, Spending { individual: vec![], lone: Some(vec![9]), due: vec![], held: vec![], coalesce: false });
    }

    #[test]
    fn a_coalesced_pass_keeps_every_row_for_the_one_message() {
        let s = spend(&decision(0, Some(3)), vec![1, 2], vec![9]);
        assert_eq!(s, Spending { individual: vec![], lone: None, due: vec![1, 2], held: vec![9], coalesce: true });
    }

    #[test]
    fn with_no_token_everything_is_held() {
        let s = spend(&decision(0, None), vec![1], vec![9]);
        assert_eq!(s, Spending { individual: vec![], lone: None, due: vec![1], held: vec![9], coalesce: false });
    }

    #[test]
    fn a_stored_budget_below_zero_reads_as_one_an_hour() {
        let now = Utc::now();
        let stored =
            StoredBudget { state: BucketState { tokens: 0.0, refilled_at: now }, per_hour: -5, burst: -1, now };
        let (after, d) = stored.decide(0, 1);
        assert_eq!(d.send_individually, 0);
        assert_eq!(d.hold, 1);
        assert!(after.tokens < 1.0);
    }
}
