//! The connection vault: an owner's credentials for Gotify, Apprise and Cairn. Secrets
//! go in and never come out — not in an answer, a page, a log line, a metric or an
//! error message; a fingerprint (a keyed HMAC, `Vault::fingerprint`) stands in for them.
//! Without `SWITCHBOARD_SECRET_ENCRYPTION_KEY` nothing is stored (`encryption_required`).
//! Every connection is created with the destination its secret is for (`base_url`), and
//! only a human admin of its scope can change that destination, and only with the secret
//! again (rotate): nothing else — a sink, another admin's sink, an agent — can make the
//! secret go anywhere else. Team admins manage a team's connections; every member sees
//! their names.

use crate::domain::ids::ConnectionId;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::owners::scope_to_create_in;
use crate::service::permissions::{Action, Place, check};
use crate::service::principal::Principal;
use crate::sinks::rules::schemes::SchemeError;
use crate::sinks::rules::vocabulary::ConnectionKind;
use crate::sinks::statements::{ConnectionRow, NewConnection};
use crate::store::tenancy::Reach;

/// Longest secret accepted, in bytes (Apprise URL lists can be long).
pub const SECRET_MAX_BYTES: usize = 4096;

/// What a new connection is to be. Its Debug form hides the secret.
pub struct CreateConnection {
    /// Unique in the owner scope, 1–100 characters.
    pub name: String,
    /// What it is a credential for.
    pub kind: ConnectionKind,
    /// The credential.
    pub secret: String,
    /// Where the secret may be sent: the Gotify server, the Apprise API server or the
    /// Cairn. Required for every kind.
    pub base_url: Option<String>,
    /// `team:T` or an email the caller administers; none: their own scope.
    pub owner: Option<String>,
}

impl std::fmt::Debug for CreateConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateConnection").field("name", &self.name).field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// Checks a secret's shape (never echoing it): present, bounded, no control characters.
fn checked_secret(secret: &str) -> Result<&str> {
    let secret = secret.trim();
    if secret.is_empty() || secret.len() > SECRET_MAX_BYTES {
        return Err(Error::invalid("secret", format!("must be 1–{SECRET_MAX_BYTES} bytes")));
    }
    if secret.chars().any(char::is_control) {
        return Err(Error::invalid("secret", "contains control characters"));
    }
    Ok(secret)
}

/// A name: trimmed, 1–100 characters, no control characters.
pub(crate) fn checked_name(name: &str) -> Result<String> {
    let name = name.trim();
    if !(1..=100).contains(&name.chars().count()) || name.chars().any(char::is_control) {
        return Err(Error::invalid("name", "must be 1–100 characters without control characters"));
    }
    Ok(name.to_owned())
}

/// Stores a connection in the caller's scope (or a team they administer) and answers
/// it with its fingerprint. The secret of an Apprise connection that holds URLs (it
/// contains `://`) must pass the scheme allowlist (`forbidden_scheme`, naming the
/// scheme only, storing nothing).
pub async fn create(s: &Services, who: &Reach, c: CreateConnection) -> Result<ConnectionRow> {
    let name = checked_name(&c.name)?;
    let secret = checked_secret(&c.secret)?;
    let base_url = checked_destination(s, c.base_url.as_deref()).await?;
    if c.kind == ConnectionKind::Apprise && secret.contains("://") {
        s.sinks.schemes.check(secret).map_err(scheme_refusal)?;
    }
    let scope = scope_to_create_in(s, who, c.owner.as_deref(), Action::CreateConnection).await?;
    s.store
        .create_connection(
            &s.vault,
            NewConnection { scope, name, kind: c.kind, secret: secret.to_owned(), base_url, by: who.human },
        )
        .await
}

/// A refusal of stateless Apprise URLs as the API says it: `forbidden_scheme` naming
/// the scheme, or `invalid_argument` naming the URL's position; never the URL.
pub(super) fn scheme_refusal(e: SchemeError) -> Error {
    match e {
        SchemeError::ForbiddenScheme(scheme) => {
            Error::ForbiddenScheme(format!("the Apprise scheme {scheme:?} is not allowed on this instance"))
        }
        other => Error::invalid("secret", other),
    }
}

/// A connection's destination as given: required, a base URL (no query or fragment), past
/// the outbound guard; answered normalised (`domain::destination`).
async fn checked_destination(s: &Services, given: Option<&str>) -> Result<String> {
    let given = given.map(str::trim).filter(|u| !u.is_empty());
    let Some(given) = given else {
        return Err(Error::invalid("base_url", "required: where the secret may be sent"));
    };
    let normalised = crate::sinks::rules::destination::normalised(given).map_err(|e| Error::invalid("base_url", e))?;
    check_url(s, &normalised).await?;
    Ok(normalised)
}

/// A URL a connection or sink posts to: parsed and checked by the outbound guard now
/// (it is checked again on every dial). A refusal that depends on where its host points
/// answers `forbidden_target`, the same for every cause (SPEC 13, "Outbound refusals").
pub(super) async fn check_url(s: &Services, url: &str) -> Result<()> {
    s.guard.check(url).await.map_err(|e| e.saving("base_url"))
}

/// Every connection in the caller's scopes (names, kinds, fingerprints).
pub async fn list(s: &Services, who: &Reach) -> Result<Vec<ConnectionRow>> {
    check(Action::ListConnections, Principal::Human(who), None)?;
    s.store.list_connections(&who.scope_ids()).await
}

/// Replaces a connection's secret, for a human admin of its scope, and with `base_url`
/// also where it may be sent (binding an unbound connection: its sinks' held messages
/// then go out there, as one coalesced message within their budgets); answers the new
/// fingerprint. A destination changes only with the secret given again, so nobody can
/// send a secret they do not know somewhere new.
pub async fn rotate(
    s: &Services,
    who: &Reach,
    id: ConnectionId,
    secret: &str,
    base_url: Option<&str>,
) -> Result<ConnectionRow> {
    let secret = checked_secret(secret)?;
    let found = s.store.connection_in(&who.scope_ids(), id).await?;
    check(Action::RotateConnection, Principal::Human(who), Some(Place::scope(found.scope_id)))?;
    let destination = match base_url {
        Some(url) => Some(checked_destination(s, Some(url)).await?),
        None => None,
    };
    if found.kind == ConnectionKind::Apprise && secret.contains("://") {
        s.sinks.schemes.check(secret).map_err(scheme_refusal)?;
    }
    s.store.rotate_connection(&s.vault, found.scope_id, id, secret, destination.as_deref()).await
}

/// Tests a cairn connection, for an admin of its scope: asks its Cairn who the token is
/// (`GET {base}/v1/whoami`, SPEC section 11), which changes nothing there. Answers as a
/// sink's test does (`sinks::TestResult`): nothing when the Cairn knows the token, else
/// the error class and what it means, naming no secret. A gotify or apprise connection
/// has no URL of its own (its sinks carry one): it is tested through a sink (`conflict`).
///
/// Unlike a sink's test send, which a person sees arrive, a whoami is invisible and
/// harmless, so it is not counted against a limit. The secret goes only to the
/// connection's bound destination.
pub async fn test(s: &Services, who: &Reach, id: ConnectionId) -> Result<Option<(&'static str, String)>> {
    use crate::sinks::rules::outcome::ErrorClass;
    let found = s.store.connection_in(&who.scope_ids(), id).await?;
    check(Action::TestConnection, Principal::Human(who), Some(Place::scope(found.scope_id)))?;
    if found.kind != ConnectionKind::Cairn {
        return Err(Error::Conflict(format!(
            "a {} connection is tested through a sink that posts with it; only a cairn connection is tested on its own",
            found.kind.as_str()
        )));
    }
    let Some(credential) = s.store.bound_credential(&s.vault, found.scope_id, id).await? else {
        return Err(unbound());
    };
    let failed =
        crate::digests::clients::publish::whoami(&s.guard.client(), &credential.destination, &credential.secret).await;
    Ok(failed.map(|class| {
        let means = match class {
            ErrorClass::Auth | ErrorClass::Forbidden => "the Cairn refused the token".to_owned(),
            ErrorClass::NotFound => "no Cairn answers whoami at this base URL".to_owned(),
            ErrorClass::RejectedSsrf => crate::outbound::refusal::REJECTED_URL_MESSAGE.to_owned(),
            ErrorClass::ForbiddenTarget => crate::outbound::refusal::FORBIDDEN_TARGET_MESSAGE.to_owned(),
            other => format!("the Cairn answered with an error of class {}", other.as_str()),
        };
        (class.as_str(), means)
    }))
}

/// The refusal of a connection that is not bound to a destination yet.
pub(super) fn unbound() -> Error {
    Error::Conflict(
        "the connection is not bound to a destination: an admin of its owner rotates it with its secret and \
         base_url first"
            .into(),
    )
}

/// Deletes a connection no sink uses, for an admin of its scope.
pub async fn delete(s: &Services, who: &Reach, id: ConnectionId) -> Result<()> {
    let found = s.store.connection_in(&who.scope_ids(), id).await?;
    check(Action::DeleteConnection, Principal::Human(who), Some(Place::scope(found.scope_id)))?;
    s.store.delete_connection(found.scope_id, id).await
}
