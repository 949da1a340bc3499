//! Issue 10, found from the outside: owner references and sign-in that told who has an
//! account, quarantine release and discard open to every team member, and intake
//! bodies read without bounds; issue 37: fan-out grants to anyone again, telling
//! nobody who has an account.

mod bodies;
mod enumeration;
mod fanout_grants;
mod outbound_refusals;
mod quarantine_roles;
