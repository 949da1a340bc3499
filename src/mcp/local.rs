//! Work that cannot leave its thread, on an arbiter of the MCP surface's own. rmcp runs a
//! tool on whichever thread it pleases, so a tool's work must be `Send`; one verb's is not
//! (`test_sink` posts with awc, whose client is bound to its thread). That work is handed
//! to this arbiter and its answer sent back.

use std::future::Future;
use std::sync::Arc;

use actix::Arbiter;
use actix_rt::ArbiterHandle;

use crate::error::{Error, Result};

/// The arbiter; clones share it, and the last one stops it.
#[derive(Clone)]
pub struct Local {
    handle: ArbiterHandle,
    _owner: Arc<Owner>,
}

struct Owner(Arbiter);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.stop();
    }
}

impl Local {
    /// Starts the arbiter (inside an actix system).
    pub fn start() -> Self {
        let arbiter = Arbiter::new();
        Local { handle: arbiter.handle(), _owner: Arc::new(Owner(arbiter)) }
    }

    /// Runs the future `work` makes on the arbiter and answers what it answers.
    pub async fn run<W, F, T>(&self, work: W) -> Result<T>
    where
        W: FnOnce() -> F + Send + 'static,
        F: Future<Output = Result<T>> + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let sent = self.handle.spawn_fn(move || {
            actix_rt::spawn(async move {
                // The caller may have gone; its answer then goes nowhere.
                let _ = tx.send(work().await);
            });
        });
        if !sent {
            return Err(Error::Unavailable("the server is stopping".into()));
        }
        rx.await.map_err(|_| Error::Unavailable("the server is stopping".into()))?
    }
}
