//! Where the Queues pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use crate::domain::ids::EndpointId;

/// Every queue in the human's reach, trouble first (`GET`).
pub const QUEUES: &str = "/queues";
/// One queue's page (route pattern).
pub const QUEUE: &str = "/queues/{endpoint_id}/{queue}";
/// Pausing or resuming a queue from these pages (`POST`).
pub const QUEUE_ADMISSION: &str = "/queues/admission";

/// One queue's page. Queue names are `a-z 0-9 . _ -` (a name outside that is never
/// measured), so they go into the path as they are.
pub fn queue(endpoint: EndpointId, queue: &str) -> String {
    format!("/queues/{endpoint}/{queue}")
}

/// The overview's next page.
pub fn queues_after(cursor: &str) -> String {
    format!("{QUEUES}?cursor={cursor}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_page_is_under_its_endpoint_id() {
        let e = EndpointId::new();
        assert_eq!(queue(e, "builds"), format!("/queues/{e}/builds"));
        assert!(e.to_string().starts_with("ep_"));
    }
}
