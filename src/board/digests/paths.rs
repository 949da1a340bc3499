//! Where the Digests pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use super::super::paths::fill;
use crate::domain::ids::DigestId;

/// Every digest of the human's scopes (`GET`); scheduling one (`POST`).
pub const DIGESTS: &str = "/digests";
/// One digest: its settings and recent send times (route pattern).
pub const DIGEST: &str = "/digests/{id}";
/// Replacing a digest with the edit form's contents (route pattern).
pub const DIGEST_UPDATE: &str = "/digests/{id}/update";
/// Deleting a digest (route pattern).
pub const DIGEST_DELETE: &str = "/digests/{id}/delete";
/// What the digest would say now (route pattern).
pub const DIGEST_PREVIEW: &str = "/digests/{id}/preview";

/// One digest's page.
pub fn digest(id: DigestId) -> String {
    fill(DIGEST, id)
}

/// Replace a digest (`POST`, the whole form).
pub fn digest_update(id: DigestId) -> String {
    fill(DIGEST_UPDATE, id)
}

/// Delete a digest (`POST`).
pub fn digest_delete(id: DigestId) -> String {
    fill(DIGEST_DELETE, id)
}

/// The digest's preview.
pub fn digest_preview(id: DigestId) -> String {
    fill(DIGEST_PREVIEW, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_paths_use_the_prefixed_ids() {
        let d = DigestId::new();
        assert_eq!(digest(d), format!("/digests/{d}"));
        assert_eq!(digest_update(d), format!("/digests/{d}/update"));
        assert_eq!(digest_delete(d), format!("/digests/{d}/delete"));
        assert_eq!(digest_preview(d), format!("/digests/{d}/preview"));
        assert!(d.to_string().starts_with("dg_"));
    }
}
