//! Transactions that change state. The store never calls the network: it commits, then
//! emits [`signals`]. Every transition is one conditional statement (or one
//! transaction), so racing instances move a row once.

pub mod board;
pub mod board_sessions;
pub mod dead_letters;
pub mod deliveries;
pub mod endpoints;
pub mod fanout;
pub mod held_work;
pub mod hooks;
pub mod quarantine;
pub mod retention;
pub mod signals;
pub mod tenancy;
pub mod todos;
pub mod webhooks;

use crate::db::{DbConn, DbPool};
use crate::error::Result;
use signals::{Emitter, Signal};

/// The store: a pool and where to send signals after commit.
#[derive(Clone)]
pub struct Store {
    pool: DbPool,
    emitter: Emitter,
}

impl Store {
    /// A store over `pool` that emits to `emitter`.
    pub fn new(pool: DbPool, emitter: Emitter) -> Self {
        Store { pool, emitter }
    }

    /// The pool (for callers composing their own transactions, such as intake).
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    /// The emitter (for callers composing their own transactions).
    pub fn emitter(&self) -> &Emitter {
        &self.emitter
    }

    /// Checks a connection out of the pool.
    pub async fn conn(&self) -> Result<DbConn> {
        Ok(self.pool.get().await?)
    }

    /// Sends what a committed transaction produced.
    pub(crate) fn emit(&self, signals: Vec<Signal>) {
        if !signals.is_empty() {
            self.emitter.emit(signals);
        }
    }

    /// Round-trips the database (readiness).
    pub async fn ping(&self) -> Result<()> {
        use diesel_async::RunQueryDsl;
        let mut conn = self.conn().await?;
        diesel::sql_query("SELECT 1").execute(&mut conn).await?;
        Ok(())
    }
}
