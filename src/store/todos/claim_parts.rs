//! What every claim statement shares, whichever path it takes (unbudgeted in
//! [`super::claim`], under a budget in [`super::admitted`]): the parameters after the
//! first two, the CTEs that move the chosen todo to `claimed` and open its attempt,
//! which todos a claim by id takes, and which todos a resume takes (both paths of a
//! resume, in [`super::interrupt`] and [`super::admitted`]).

use diesel::pg::Pg;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Bool, Bytea, Int4, Nullable, Text};

/// What every form of claim binds after its own two parameters.
pub(super) struct ClaimParams {
    /// The lease token, shown to the claimer once.
    pub(super) token: String,
    /// Its SHA-256, stored.
    pub(super) hash: [u8; 32],
    /// Lease seconds.
    pub(super) lease: i32,
    /// The claimant label.
    pub(super) claimant: Option<String>,
    /// Whether the attempt is a relay attempt.
    pub(super) relay: bool,
}

impl ClaimParams {
    /// Binds `$3`–`$6` of [`CLAIM_CTES`].
    pub(super) fn bind_tail<'f>(&'f self, q: BoxedSqlQuery<'f, Pg, SqlQuery>) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
        q.bind::<Int4, _>(self.lease)
            .bind::<Bytea, _>(self.hash.as_slice())
            .bind::<Nullable<Text>, _>(self.claimant.as_deref())
            .bind::<Bool, _>(self.relay)
    }
}

/// The assignments that move a todo (alias `t`) to `claimed` and open its new attempt on
/// the todo row (its history row is written when it closes: [`super::attempt_close`]),
/// which says so in `attempt_on_row` (the completion's one-statement path,
/// `super::finish`). The four arguments are the SQL of the lease seconds, the lease
/// token's hash, the claimant label and the relay flag; with one argument (the hash) the
/// others are `$3`, `$5` and `$6`, as every claim of one todo or one caller binds them.
macro_rules! claim_set {
    ($lease:literal, $hash:literal, $claimant:literal, $relay:literal) => {
        concat!(
            "SET state = 'claimed', attempt = t.attempt + 1, attempts_total = t.attempts_total + 1, \
               claimed_by = t.endpoint_id, lease_expires_at = now() + ",
            $lease,
            " * interval '1 second', lease_token_hash = ",
            $hash,
            ", claimed_at = now(), updated_at = now(), next_retry_at = NULL, attempt_claimant = ",
            $claimant,
            ", attempt_relay = ",
            $relay,
            ", attempt_heartbeat_at = NULL, attempt_on_row = t.attempts_total + 1"
        )
    };
    ($hash:literal) => {
        claim_set!("$3", $hash, "$5", "$6")
    };
}

/// The CTE of a claim statement after the candidates are chosen (CTE `candidate`, alias
/// `c`): each todo moves to `claimed` (`claim_set!`, with its arguments), `$by_key` a
/// further condition on the updated rows. `keyed` names every candidate's key for the
/// batch forms (see [`BATCH_CLAIM_CTES`]).
macro_rules! claim_ctes {
    (keyed, $($set:literal),+) => {
        claim_ctes!(" AND t.id = ANY (ARRAY(SELECT id FROM candidate))", $($set),+)
    };
    ($by_key:literal, $($set:literal),+) => {
        concat!(
            "claimed AS (UPDATE todos t ",
            claim_set!($($set),+),
            " FROM candidate c WHERE t.id = c.id",
            $by_key,
            " RETURNING t.*)"
        )
    };
}

/// The assignments of a claim of one todo: its lease token's hash is `$4`.
pub(super) const CLAIM_SET: &str = claim_set!("$4");

/// The CTEs of every claim statement of one todo: its lease token's hash is `$4`.
pub(super) const CLAIM_CTES: &str = claim_ctes!("", "$4");

/// The CTEs of a batch claim: the candidates are numbered (`c.n`, from 1) and `$4` is the
/// array of their lease tokens' hashes, one per candidate. The rows are also named by
/// their keys (`= ANY`), so the update looks each one up by primary key in any plan: a
/// generic plan, guessing a tenth of the pending rows for an unknown `limit`, joined the
/// candidates to a scan of the whole table.
pub(super) const BATCH_CLAIM_CTES: &str = claim_ctes!(keyed, "($4::bytea[])[c.n]");

/// The CTEs of a claim of several callers' claims at once (the group commit of
/// single claim-next requests, `crate::service::group_commit`): as [`BATCH_CLAIM_CTES`], and
/// each candidate's lease seconds (`$3`), claimant (`$5`) and relay flag (`$6`) are its
/// caller's, arrays indexed as the hashes are.
pub(super) const EACH_CLAIM_CTES: &str =
    claim_ctes!(keyed, "($3::int4[])[c.n]", "($4::bytea[])[c.n]", "($5::text[])[c.n]", "($6::bool[])[c.n]");

/// Which todos a claim by id takes (alias `t`): pending, or failed with its retry due.
pub(super) const CLAIMABLE: &str = "(t.state = 'pending' OR (t.state = 'failed' AND t.next_retry_at <= now()))";

/// Which todos a resume takes (alias `t`; `$4` the lease token's hash or null): an
/// interrupted todo of a drainable queue, held under that token when one is given.
pub(super) const RESUMABLE: &str = "(t.queue <> 'quarantine' AND t.state COLLATE \"C\" IN ('input_required', 'auth_required') \
    AND ($4::bytea IS NULL OR t.lease_token_hash = $4))";
