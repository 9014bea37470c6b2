//! The host's key, as every backend takes it: 32 bytes, wiped when dropped, never printed. The
//! embedded backend hands it to the engine (which seals every frame with a data key this key
//! wraps); the PostgreSQL backend seals each row's value and metadata itself
//! (`rabosh-memory-postgres`, `seal.rs`).

use std::fmt;

use zeroize::Zeroizing;

use crate::{Error, Result};

/// Bytes of a host key (XChaCha20-Poly1305 keys are 256 bits).
pub const KEY_BYTES: usize = 32;

/// A host key. `Debug` shows no byte of it; its memory is zeroed on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct EncryptionKey(Zeroizing<[u8; KEY_BYTES]>);

impl EncryptionKey {
    #[must_use]
    pub fn new(bytes: [u8; KEY_BYTES]) -> EncryptionKey {
        EncryptionKey(Zeroizing::new(bytes))
    }

    /// Exactly 32 bytes, else `InvalidOption` naming `option` and the length (never the bytes).
    pub fn from_slice(option: &'static str, bytes: &[u8]) -> Result<EncryptionKey> {
        let array: [u8; KEY_BYTES] = bytes.try_into().map_err(|_| Error::InvalidOption {
            option,
            value: format!("{} bytes (expected {KEY_BYTES})", bytes.len()),
        })?;
        Ok(EncryptionKey::new(array))
    }

    #[must_use]
    pub fn bytes(&self) -> &[u8; KEY_BYTES] {
        &self.0
    }
}

impl fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EncryptionKey(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_byte_and_a_wrong_length_names_only_the_length() {
        let k = EncryptionKey::new([0xAB; KEY_BYTES]);
        let shown = format!("{k:?}");
        assert!(!shown.to_lowercase().contains("ab") && !shown.contains("171"), "{shown}");
        let e = EncryptionKey::from_slice("encryption.key", &[0xAB; 31]).unwrap_err();
        assert_eq!(e.to_string(), "invalid option encryption.key: 31 bytes (expected 32)");
    }
}
