//! What the two web surfaces share — the REST API ([`crate::http`]) and the Board
//! ([`crate::board`]) — so that neither imports the other: bounded request-body reads,
//! names taken from a URL path (and how a path that does not extract is answered),
//! and the shape of a route-table entry (path, method, and the service action it
//! performs, which the permission test walks); and how many worker threads serve them.
//! Start-up mounts both surfaces.

pub mod body_read;
pub mod path_name;
pub mod routes;
pub mod workers;
