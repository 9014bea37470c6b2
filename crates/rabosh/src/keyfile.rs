//! The `KEY` file: the store's data key wrapped by the host's key, and its rotation.

use crate::{Encryption, Error, Result, Store};

impl Store {
    /// Whether this store is encrypted (opened with `Options::encryption`).
    pub fn is_encrypted(&self) -> bool {
        self.options.encryption.is_some()
    }

    /// Rewraps the data key under `new`: crash-safe (after a kill the old key or the new one
    /// opens the store, never neither); no data is rewritten. `NotEncrypted` on a plain store.
    pub fn rotate_key(&self, new: Encryption) -> Result<()> {
        let _ = new;
        if !self.is_encrypted() {
            return Err(Error::NotEncrypted { dir: self.dir.clone() });
        }
        Err(Error::InvalidArgument("rotate_key: not implemented yet".into()))
    }
}
