//! Pure domain logic: ids, states, transitions, limits, tokens and grants. Nothing here
//! touches the database or the network, so all of it is unit-tested directly.

pub mod admission;
pub mod client_address;
pub mod fair_share;
pub mod grants;
pub mod group_commit;
pub mod ids;
pub mod neutralise;
pub mod new_todo;
pub mod passwords;
pub mod pills;
pub mod retention;
pub mod signals;
pub mod text;
pub(crate) mod text_enum;
pub mod todo_search;
pub mod todo_state;
pub mod tokens;
pub mod transitions;
pub mod trusted_proxies;
pub mod vocabulary;
pub mod waiters;
pub mod wakeups;
