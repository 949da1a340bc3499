//! Who a credential is: endpoint tokens (`sbk_…`, answered from a cache that the
//! database keeps coherent on every instance) and operator tokens (`sbo_…`, never
//! cached, so `revoke-operator-tokens` and `set-password` take effect on the next
//! request everywhere). The adapters take the token out of the request; these decide.

mod cache;
mod changes;
pub mod confirm;

pub use cache::AuthCache;
pub use changes::{AUTH_CHANGES_CHANNEL, subscription};

use super::Services;
use crate::domain::tokens::sha256;
use crate::error::{Error, Result};
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;

/// The endpoint an `sbk_…` token belongs to; 401 when it belongs to none (or the
/// endpoint is revoked or expired).
pub async fn endpoint(s: &Services, token: &str) -> Result<AgentPrincipal> {
    let key = sha256(token.as_bytes());
    if let Some(hit) = s.auth_cache.get(&key) {
        return Ok(hit);
    }
    // Taken before the lookup: an eviction meanwhile means its answer may be stale.
    let generation = s.auth_cache.generation();
    let principal = s.store.authenticate_endpoint(token).await?.ok_or(Error::Unauthenticated)?;
    s.auth_cache.put(generation, key, principal.clone());
    Ok(principal)
}

/// The human an `sbo_…` token belongs to, with their scopes; 401 when none.
pub async fn operator(s: &Services, token: &str) -> Result<Reach> {
    s.store.authenticate_operator(token).await?.ok_or(Error::Unauthenticated)
}
