//! Encryption at rest: the AEAD, the host key, the KEY file.

pub mod crypt;
pub(crate) mod encryption;
pub(crate) mod keyfile;
