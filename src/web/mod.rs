//! What the web surfaces share — the REST API ([`crate::http`]), the Board
//! ([`crate::board`]) and the MCP tools ([`crate::mcp`]) — so that none imports another:
//! bounded request-body reads, the JSON body rules and limit, the bearer credential,
//! names taken from a URL path (and how a path that does not extract is answered),
//! the client's address (behind trusted proxies), and the shape of a route-table entry
//! (path, method, and the service action it performs, which the permission test walks);
//! how many worker threads serve them; and the count of every answer by surface and
//! status class. Start-up mounts every surface.

pub mod answers;
pub mod bearer;
pub mod body_read;
pub mod client_address;
pub mod json_body;
pub mod path_name;
pub mod routes;
pub mod workers;
