//! The host's key-encryption key (public API). The sealing itself lives in `crypt.rs`.

use crate::error::{Error, Result};
use std::fmt;

/// Bytes of a host key (XChaCha20-Poly1305 keys are 256 bits).
pub const KEY_BYTES: usize = 32;

/// The host's 32-byte key-encryption key. It never encrypts data itself: it wraps the store's
/// random data key (FORMAT.md, "Encryption at rest"), so rotating it rewrites one small file.
/// The bytes are zeroized when the last copy is dropped and never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Encryption {
    key: zeroize::Zeroizing<[u8; KEY_BYTES]>,
}

impl Encryption {
    #[must_use]
    pub fn new(key: [u8; KEY_BYTES]) -> Self {
        Encryption { key: zeroize::Zeroizing::new(key) }
    }

    /// `InvalidArgument` unless `key` is exactly 32 bytes.
    pub fn from_slice(key: &[u8]) -> Result<Self> {
        let key: [u8; KEY_BYTES] = key.try_into().map_err(|_| {
            Error::InvalidArgument(format!("an encryption key must be exactly 32 bytes, got {}", key.len()))
        })?;
        Ok(Encryption::new(key))
    }

    /// The key itself, for a caller that also seals with it outside the engine (a backend that
    /// does not store through the engine wraps its own data key with it).
    #[must_use]
    pub fn bytes(&self) -> &[u8; KEY_BYTES] {
        &self.key
    }
}

impl fmt::Debug for Encryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Encryption { key: <redacted> }")
    }
}
