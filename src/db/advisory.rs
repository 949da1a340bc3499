//! Session advisory locks that keep start-up work of several instances apart. Advisory
//! locks are per database, so the keys only need to be distinct within Switchboard's.

use super::statement::statement;

/// High half of every key: "SWBD", so no other application's locks collide with ours.
const NAMESPACE: i64 = 0x5357_4244 << 32;

/// Held on the migrating connection while migrations run: replicas starting together
/// (and `switchboard migrate`, and admin commands) wait, then find nothing to do.
pub const MIGRATIONS: i64 = NAMESPACE | 1;

/// Held while the demo owner and endpoint are seeded, so two embedded `serve`s do not
/// both create them.
pub const DEMO_SEED: i64 = NAMESPACE | 2;

statement! {
    /// Waits for session lock `$1`.
    pub static LOCK = "SELECT pg_advisory_lock($1)";
    /// Takes session lock `$1` if it is free: whether it did (`locked`).
    pub static TRY_LOCK = "SELECT pg_try_advisory_lock($1) AS locked";
    /// Releases session lock `$1`.
    pub static UNLOCK = "SELECT pg_advisory_unlock($1)";
}
