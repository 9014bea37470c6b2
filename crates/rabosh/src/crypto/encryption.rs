//! The host's key-encryption key (public API). The sealing itself lives in `crypt.rs`.

use crate::error::{Error, Result};
use std::fmt;

/// The host's 32-byte key-encryption key. It never encrypts data itself: it wraps the store's
/// random data key (FORMAT.md, "Encryption at rest"), so rotating it rewrites one small file.
/// The bytes are zeroized when the last copy is dropped and never printed.
#[derive(Clone)]
pub struct Encryption {
    key: zeroize::Zeroizing<[u8; 32]>,
}

impl Encryption {
    #[must_use]
    pub fn new(key: [u8; 32]) -> Self {
        Encryption { key: zeroize::Zeroizing::new(key) }
    }

    /// `InvalidArgument` unless `key` is exactly 32 bytes.
    pub fn from_slice(key: &[u8]) -> Result<Self> {
        let key: [u8; 32] = key.try_into().map_err(|_| {
            Error::InvalidArgument(format!("an encryption key must be exactly 32 bytes, got {}", key.len()))
        })?;
        Ok(Encryption::new(key))
    }

    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.key
    }
}

impl fmt::Debug for Encryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Encryption { key: <redacted> }")
    }
}
