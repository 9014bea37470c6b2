//! The host's key, as every backend takes it: the engine's own key type (32 bytes, wiped when
//! dropped, never printed), so one definition serves both. The embedded backend hands it to the
//! engine (which seals every frame with a data key this key wraps); the PostgreSQL backend seals
//! each row's value and metadata itself (`rabosh-memory-postgres`, `seal.rs`).

use crate::{Error, Result};

pub use rabosh::{Encryption as EncryptionKey, KEY_BYTES};

/// A host key from exactly 32 bytes, else `InvalidOption` naming `option` and the length (never
/// the bytes).
pub fn key_from_slice(option: &'static str, bytes: &[u8]) -> Result<EncryptionKey> {
    let array: [u8; KEY_BYTES] = bytes
        .try_into()
        .map_err(|_| Error::InvalidOption { option, value: format!("{} bytes (expected {KEY_BYTES})", bytes.len()) })?;
    Ok(EncryptionKey::new(array))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_byte_and_a_wrong_length_names_only_the_length() {
        let k = EncryptionKey::new([0xAB; KEY_BYTES]);
        let shown = format!("{k:?}");
        assert!(!shown.to_lowercase().contains("ab") && !shown.contains("171"), "{shown}");
        let e = key_from_slice("encryption.key", &[0xAB; 31]).unwrap_err();
        assert_eq!(e.to_string(), "invalid option encryption.key: 31 bytes (expected 32)");
    }
}
