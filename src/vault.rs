//! Secrets at rest: AES-256-GCM under `SWITCHBOARD_SECRET_ENCRYPTION_KEY`. A stored
//! secret is `enc:v1:` + base64 (standard, no padding) of a random 96-bit nonce followed
//! by the ciphertext and tag. Without a key nothing secret is stored.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use crate::config::SecretKey;

const PREFIX: &str = "enc:v1:";
const NONCE_LEN: usize = 12;

/// Why a secret could not be stored or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// No encryption key is configured, so secrets are refused.
    #[error("encryption_required: set SWITCHBOARD_SECRET_ENCRYPTION_KEY to store secrets")]
    EncryptionRequired,
    /// The stored value is not in the envelope format.
    #[error("stored secret is not an enc:v1 envelope")]
    Malformed,
    /// Authentication failed: wrong key, or the value was tampered with.
    #[error("stored secret does not decrypt under the configured key")]
    Undecryptable,
}

/// Encrypts and decrypts secrets with the instance key.
#[derive(Clone)]
pub struct Vault {
    cipher: Option<Aes256Gcm>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("has_key", &self.cipher.is_some()).finish()
    }
}

impl Vault {
    /// A vault over `key` (none: every seal is refused).
    pub fn new(key: Option<&SecretKey>) -> Self {
        Vault { cipher: key.map(|k| Aes256Gcm::new((&k.0).into())) }
    }

    /// Seals `plaintext` into its stored form.
    pub fn seal(&self, plaintext: &[u8]) -> Result<String, VaultError> {
        let cipher = self.cipher.as_ref().ok_or(VaultError::EncryptionRequired)?;
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = cipher.encrypt(&nonce, plaintext).map_err(|_| VaultError::Undecryptable)?;
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", STANDARD_NO_PAD.encode(out)))
    }

    /// Opens a stored form back into the secret.
    pub fn open(&self, stored: &str) -> Result<Vec<u8>, VaultError> {
        let cipher = self.cipher.as_ref().ok_or(VaultError::EncryptionRequired)?;
        let raw = stored.strip_prefix(PREFIX).ok_or(VaultError::Malformed)?;
        let bytes = STANDARD_NO_PAD.decode(raw).map_err(|_| VaultError::Malformed)?;
        if bytes.len() <= NONCE_LEN {
            return Err(VaultError::Malformed);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        cipher.decrypt(Nonce::from_slice(nonce), sealed).map_err(|_| VaultError::Undecryptable)
    }
}

/// First 12 hex characters of SHA-256 of a secret: enough to tell secrets apart in a
/// listing, useless for recovering one.
pub fn fingerprint(secret: &[u8]) -> String {
    hex::encode(crate::domain::tokens::sha256(secret))[..12].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> Vault {
        Vault::new(Some(&SecretKey([9; 32])))
    }

    #[test]
    fn a_sealed_secret_opens_to_itself_and_never_contains_it() {
        let v = vault();
        let sealed = v.seal(b"whsec_topsecret").unwrap();
        assert!(sealed.starts_with("enc:v1:"));
        assert!(!sealed.contains("topsecret"));
        assert_eq!(v.open(&sealed).unwrap(), b"whsec_topsecret");
        assert_ne!(v.seal(b"whsec_topsecret").unwrap(), sealed, "a fresh nonce each time");
    }

    #[test]
    fn without_a_key_nothing_is_sealed() {
        assert_eq!(Vault::new(None).seal(b"x"), Err(VaultError::EncryptionRequired));
    }

    #[test]
    fn a_wrong_key_or_a_flipped_byte_does_not_open() {
        let sealed = vault().seal(b"secret").unwrap();
        let other = Vault::new(Some(&SecretKey([8; 32])));
        assert_eq!(other.open(&sealed), Err(VaultError::Undecryptable));
        let mut bytes = STANDARD_NO_PAD.decode(&sealed[PREFIX.len()..]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let tampered = format!("{PREFIX}{}", STANDARD_NO_PAD.encode(bytes));
        assert_eq!(vault().open(&tampered), Err(VaultError::Undecryptable));
        assert_eq!(vault().open("plain"), Err(VaultError::Malformed));
    }

    #[test]
    fn fingerprints_are_twelve_hex_characters() {
        assert_eq!(fingerprint(b"abc").len(), 12);
        assert_ne!(fingerprint(b"abc"), fingerprint(b"abd"));
    }
}
