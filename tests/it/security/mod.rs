//! Issue 10, found from the outside: owner references and sign-in that told who has an
//! account, quarantine release and discard open to every team member, and intake
//! bodies read without bounds.

mod bodies;
mod enumeration;
mod outbound_refusals;
mod quarantine_roles;
