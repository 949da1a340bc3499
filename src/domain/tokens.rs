//! Bearer credentials and lease tokens. Tokens are shown once; only their SHA-256 is
//! stored, so a database leak does not leak a working credential.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Prefix of an agent endpoint token.
pub const ENDPOINT_TOKEN_PREFIX: &str = "sbk_";
/// Prefix of a human's operator API token.
pub const OPERATOR_TOKEN_PREFIX: &str = "sbo_";
/// Prefix of a webhook's ingest token (the last segment of its ingest URL).
pub const INGEST_TOKEN_PREFIX: &str = "sbw_";

/// A freshly minted secret and what is stored of it. Its Debug form never shows the
/// secret.
#[derive(Clone)]
pub struct MintedToken {
    /// The full token, shown to its holder once.
    pub plaintext: String,
    /// SHA-256 of the full token.
    pub hash: [u8; 32],
    /// A short, non-secret display hint (prefix plus 6 characters).
    pub display_prefix: String,
}

impl std::fmt::Debug for MintedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MintedToken").field("display_prefix", &self.display_prefix).finish_non_exhaustive()
    }
}

fn random_b64(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// Mints a bearer token `<prefix>` + base64url of 32 random bytes.
pub fn mint(prefix: &str) -> MintedToken {
    let plaintext = format!("{prefix}{}", random_b64(32));
    let hash = sha256(plaintext.as_bytes());
    let display_prefix = plaintext.chars().take(prefix.len() + 6).collect();
    MintedToken { plaintext, hash, display_prefix }
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// A signing secret Switchboard generates for a webhook: `whsec_` + standard base64
/// of 32 random bytes (the Standard Webhooks form; the HMAC key is the decoded bytes
/// for `standard`, the whole string for the other schemes).
pub fn mint_signing_secret() -> String {
    use base64::engine::general_purpose::STANDARD;
    let mut buf = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    format!("whsec_{}", STANDARD.encode(buf))
}

/// A lease token: 16 random bytes, base64url; the claim returns it, and any later call
/// that passes it must match (fencing a stale holder).
pub fn mint_lease_token() -> (String, [u8; 32]) {
    let token = random_b64(16);
    let hash = sha256(token.as_bytes());
    (token, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_carry_their_prefix_and_hash_to_what_is_stored() {
        let t = mint(ENDPOINT_TOKEN_PREFIX);
        assert!(t.plaintext.starts_with("sbk_"));
        assert_eq!(t.plaintext.len(), 4 + 43);
        assert_eq!(t.hash, sha256(t.plaintext.as_bytes()));
        assert_eq!(t.display_prefix.len(), 10);
        assert_ne!(mint(ENDPOINT_TOKEN_PREFIX).plaintext, t.plaintext);
    }

    #[test]
    fn lease_tokens_are_sixteen_random_bytes() {
        let (token, hash) = mint_lease_token();
        assert_eq!(URL_SAFE_NO_PAD.decode(&token).unwrap().len(), 16);
        assert_eq!(hash, sha256(token.as_bytes()));
    }
}
