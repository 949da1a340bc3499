//! Queue digests: their definitions (`rows`), the sections one digest measures
//! (`sections`), and each send time decided once across instances (`runs`).

mod rows;
mod runs;
mod sections;

pub use rows::{DigestRow, DigestSpec, MAX_DIGESTS};
pub use runs::{Committed, Evaluated, PUBLISH_CLAIM_SECONDS, Publication, RunOutcome, RunRow, SendTime};
pub use sections::{Coverage, sql};
