//! Secrets at rest: AES-256-GCM under `SWITCHBOARD_SECRET_ENCRYPTION_KEY` (or, on the
//! embedded default without it, the key kept in the data dir's `secret.key`: see
//! `cli::kept`). Without a key nothing secret is stored. Two stored forms, both base64 (standard, no padding)
//! after their prefix:
//!
//! - `enc:v1:` — a random 96-bit nonce, then the secret sealed by the master key
//!   (hook and webhook signing secrets);
//! - `enc:v2:` — envelope encryption, for the connection vault: a fresh random 256-bit
//!   data key per secret seals the secret, and the master key seals (wraps) the data
//!   key; stored as the wrapping nonce, the wrapped key (48 bytes with its tag), the
//!   data nonce, then the sealed secret. A master key therefore never encrypts more
//!   than one 32-byte key per row, and rotating the master key means re-wrapping keys,
//!   not re-encrypting secrets.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use crate::config::SecretKey;

const PREFIX: &str = "enc:v1:";
const PREFIX_V2: &str = "enc:v2:";
const NONCE_LEN: usize = 12;
/// A 32-byte data key sealed with its 16-byte tag.
const WRAPPED_KEY_LEN: usize = 48;

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
    /// HMAC-SHA256(master key, [`FINGERPRINT_LABEL`]): the fingerprints' key.
    fingerprint_key: Option<[u8; 32]>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("has_key", &self.cipher.is_some()).finish()
    }
}

impl Vault {
    /// A vault over `key` (none: every seal is refused).
    pub fn new(key: Option<&SecretKey>) -> Self {
        Vault {
            cipher: key.map(|k| Aes256Gcm::new((&k.0).into())),
            fingerprint_key: key.map(|k| hmac_sha256(&k.0, FINGERPRINT_LABEL)),
        }
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

    /// Seals `plaintext` under a fresh data key of its own, which the master key wraps
    /// (`enc:v2:`).
    pub fn seal_enveloped(&self, plaintext: &[u8]) -> Result<String, VaultError> {
        let master = self.cipher.as_ref().ok_or(VaultError::EncryptionRequired)?;
        let data_key = Aes256Gcm::generate_key(&mut OsRng);
        let key_nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let wrapped = master.encrypt(&key_nonce, data_key.as_slice()).map_err(|_| VaultError::Undecryptable)?;
        let data_nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed =
            Aes256Gcm::new(&data_key).encrypt(&data_nonce, plaintext).map_err(|_| VaultError::Undecryptable)?;
        let mut out = Vec::with_capacity(2 * NONCE_LEN + WRAPPED_KEY_LEN + sealed.len());
        out.extend_from_slice(&key_nonce);
        out.extend_from_slice(&wrapped);
        out.extend_from_slice(&data_nonce);
        out.extend_from_slice(&sealed);
        Ok(format!("{PREFIX_V2}{}", STANDARD_NO_PAD.encode(out)))
    }

    /// Opens a stored form (`enc:v1:` or `enc:v2:`) back into the secret.
    pub fn open(&self, stored: &str) -> Result<Vec<u8>, VaultError> {
        let cipher = self.cipher.as_ref().ok_or(VaultError::EncryptionRequired)?;
        if let Some(raw) = stored.strip_prefix(PREFIX_V2) {
            return open_enveloped(cipher, raw);
        }
        let raw = stored.strip_prefix(PREFIX).ok_or(VaultError::Malformed)?;
        let bytes = STANDARD_NO_PAD.decode(raw).map_err(|_| VaultError::Malformed)?;
        if bytes.len() <= NONCE_LEN {
            return Err(VaultError::Malformed);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        cipher.decrypt(Nonce::from_slice(nonce), sealed).map_err(|_| VaultError::Undecryptable)
    }
}

fn open_enveloped(master: &Aes256Gcm, raw: &str) -> Result<Vec<u8>, VaultError> {
    let bytes = STANDARD_NO_PAD.decode(raw).map_err(|_| VaultError::Malformed)?;
    if bytes.len() <= 2 * NONCE_LEN + WRAPPED_KEY_LEN {
        return Err(VaultError::Malformed);
    }
    let (key_nonce, rest) = bytes.split_at(NONCE_LEN);
    let (wrapped, rest) = rest.split_at(WRAPPED_KEY_LEN);
    let (data_nonce, sealed) = rest.split_at(NONCE_LEN);
    let data_key = master.decrypt(Nonce::from_slice(key_nonce), wrapped).map_err(|_| VaultError::Undecryptable)?;
    let cipher = Aes256Gcm::new_from_slice(&data_key).map_err(|_| VaultError::Malformed)?;
    cipher.decrypt(Nonce::from_slice(data_nonce), sealed).map_err(|_| VaultError::Undecryptable)
}

/// What the master key is stretched into for fingerprints: a key of their own, so a
/// fingerprint never uses the key that seals secrets, and a new use gets a new label.
const FINGERPRINT_LABEL: &[u8] = b"switchboard fingerprint key v1";

impl Vault {
    /// First 12 hex characters of HMAC-SHA256 of `secret` under a key derived from the
    /// master key: enough to tell secrets apart in a listing, and (unlike a bare hash)
    /// no way to test guesses of a short secret without the master key. Without a
    /// master key no secret is stored, so none is fingerprinted either.
    pub fn fingerprint(&self, secret: &[u8]) -> Result<String, VaultError> {
        let key = self.fingerprint_key.as_ref().ok_or(VaultError::EncryptionRequired)?;
        Ok(hex::encode(hmac_sha256(key, secret))[..12].to_owned())
    }
}

/// HMAC-SHA256 of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let Ok(mut mac) = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(message);
    mac.finalize().into_bytes().into()
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
    fn an_enveloped_secret_has_a_data_key_of_its_own_and_opens_only_under_the_master_key() {
        let v = vault();
        let a = v.seal_enveloped(b"gotify-app-token").unwrap();
        let b = v.seal_enveloped(b"gotify-app-token").unwrap();
        assert!(a.starts_with("enc:v2:") && !a.contains("gotify"));
        assert_eq!(v.open(&a).unwrap(), b"gotify-app-token");
        let wrapped =
            |s: &str| STANDARD_NO_PAD.decode(&s[PREFIX_V2.len()..]).unwrap()[..NONCE_LEN + WRAPPED_KEY_LEN].to_vec();
        assert_ne!(wrapped(&a), wrapped(&b), "a fresh data key (and nonce) per secret");
        assert_eq!(Vault::new(Some(&SecretKey([8; 32]))).open(&a), Err(VaultError::Undecryptable));
        assert_eq!(Vault::new(None).seal_enveloped(b"x"), Err(VaultError::EncryptionRequired));
        let mut bytes = STANDARD_NO_PAD.decode(&a[PREFIX_V2.len()..]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(v.open(&format!("{PREFIX_V2}{}", STANDARD_NO_PAD.encode(&bytes))), Err(VaultError::Undecryptable));
        assert_eq!(v.open("enc:v2:AAAA"), Err(VaultError::Malformed));
    }

    #[test]
    fn fingerprints_are_twelve_hex_characters_keyed_by_the_master_key() {
        let v = vault();
        let print = v.fingerprint(b"abc").unwrap();
        assert_eq!(print.len(), 12);
        assert!(print.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(print, v.fingerprint(b"abd").unwrap());
        assert_eq!(print, v.fingerprint(b"abc").unwrap(), "the same secret, the same fingerprint");
        let other = Vault::new(Some(&SecretKey([7; 32])));
        assert_ne!(print, other.fingerprint(b"abc").unwrap(), "another master key, another fingerprint");
    }

    #[test]
    fn a_fingerprint_is_not_the_sha256_prefix_a_guess_could_be_checked_against() {
        let unsalted = hex::encode(crate::domain::tokens::sha256(b"abc"))[..12].to_owned();
        assert_ne!(vault().fingerprint(b"abc").unwrap(), unsalted);
    }

    #[test]
    fn without_a_master_key_nothing_is_fingerprinted() {
        assert_eq!(Vault::new(None).fingerprint(b"abc"), Err(VaultError::EncryptionRequired));
    }
}
