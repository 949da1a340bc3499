//! Board passwords: argon2id hashes in PHC form, and a verification that costs the same
//! whether or not the human exists or has a password, so the answer's timing does not
//! tell an attacker which emails are known.

use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng};

use crate::error::{Error, Result};

/// Minimum Board password length, in characters.
pub const PASSWORD_MIN_CHARS: usize = 12;

/// Longest accepted password, in bytes (a bound on work, far above any real password).
pub const PASSWORD_MAX_BYTES: usize = 1024;

/// Hashes a Board password with argon2id (the crate's defaults: the OWASP-recommended
/// m = 19 MiB, t = 2, p = 1) under a fresh random salt.
pub fn hash_password(password: &str) -> Result<String> {
    if password.chars().count() < PASSWORD_MIN_CHARS {
        return Err(Error::invalid("password", format!("must be at least {PASSWORD_MIN_CHARS} characters")));
    }
    if password.len() > PASSWORD_MAX_BYTES {
        return Err(Error::invalid("password", format!("must be at most {PASSWORD_MAX_BYTES} bytes")));
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::internal(format!("password hashing: {e}")))
}

/// Whether `password` matches `stored` (a PHC string). With no stored hash (unknown
/// email, or a human without a Board password) it verifies against a dummy hash with
/// the same parameters and answers false, so both paths take the same time.
/// CPU-heavy (tens of milliseconds): call it off the async executor.
pub fn verify_password(stored: Option<&str>, password: &str) -> bool {
    // No stored password is longer than the maximum, so an overlong one takes the dummy path.
    let stored = stored.filter(|_| password.len() <= PASSWORD_MAX_BYTES);
    match stored.and_then(|s| PasswordHash::new(s).ok()) {
        Some(hash) => Argon2::default().verify_password(password.as_bytes(), &hash).is_ok(),
        None => {
            if let Ok(dummy) = PasswordHash::new(dummy_hash()) {
                let _ = Argon2::default().verify_password(password.as_bytes(), &dummy);
            }
            false
        }
    }
}

/// Makes the dummy hash now (at start-up), so the first sign-in with an unknown email
/// does not take one hashing longer than a wrong password does.
pub fn prepare_dummy_hash() {
    dummy_hash();
}

/// A hash of a random password nobody knows, made once per process with the same
/// parameters as real hashes.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::generate(&mut OsRng);
        let unknowable = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(unknowable.as_str().as_bytes(), &salt)
            .map(|h| h.to_string())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_with_argon2id_and_short_ones_are_refused() {
        let h = hash_password("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(hash_password("short").is_err());
        assert!(hash_password(&"x".repeat(PASSWORD_MAX_BYTES + 1)).is_err());
    }

    #[test]
    fn only_the_right_password_verifies() {
        let h = hash_password("correct horse battery").unwrap();
        assert!(verify_password(Some(&h), "correct horse battery"));
        assert!(!verify_password(Some(&h), "correct horse batterY"));
        assert!(!verify_password(Some(&h), ""));
    }

    #[test]
    fn without_a_stored_hash_nothing_verifies() {
        assert!(!dummy_hash().is_empty(), "the dummy hash exists, so the timing path is the same");
        assert!(!verify_password(None, "correct horse battery"));
        assert!(!verify_password(Some("not a phc string"), "correct horse battery"));
    }
}
