//! What a history call did, one discriminated union per call (`{ type: 'Variant', …fields }` in
//! `binding.d.cts`), like the six commands' outcomes (outcome.rs). Hashes and ids cross as hex;
//! the facade words them and throws the typed errors.

use napi_derive::napi;
use rabosh_memory::{HostRemove, HostWrite, Redact, Revert, hex, id_hex};

/// `put`. `versionId`: absent with history off (and for `Unchanged` written while it was off).
#[napi]
pub enum NativeHostWrite {
    Written {
        content_sha256: String,
        version_id: Option<String>,
    },
    /// The memory already held this content: nothing was written.
    Unchanged {
        content_sha256: String,
        version_id: Option<String>,
    },
    /// `currentSha256`: the memory's hash now; absent: there is no memory.
    PreconditionFailed {
        current_sha256: Option<String>,
    },
    TooLarge {
        limit: f64,
    },
    IsRoot,
}

impl From<HostWrite> for NativeHostWrite {
    fn from(w: HostWrite) -> Self {
        match w {
            HostWrite::Written { sha256, version_id } => {
                NativeHostWrite::Written { content_sha256: hex(&sha256), version_id: version_id.map(id_hex) }
            }
            HostWrite::Unchanged { sha256, version_id } => {
                NativeHostWrite::Unchanged { content_sha256: hex(&sha256), version_id: version_id.map(id_hex) }
            }
            HostWrite::PreconditionFailed { current } => {
                NativeHostWrite::PreconditionFailed { current_sha256: current.as_ref().map(hex) }
            }
            HostWrite::TooLarge { limit } => NativeHostWrite::TooLarge { limit: limit as f64 },
            HostWrite::IsRoot => NativeHostWrite::IsRoot,
        }
    }
}

/// `remove`.
#[napi]
pub enum NativeHostRemove {
    Removed {
        version_id: Option<String>,
    },
    /// Nothing there: the removal already holds.
    Absent,
    PreconditionFailed {
        current_sha256: String,
    },
    IsRoot,
}

impl From<HostRemove> for NativeHostRemove {
    fn from(r: HostRemove) -> Self {
        match r {
            HostRemove::Removed { version_id } => NativeHostRemove::Removed { version_id: version_id.map(id_hex) },
            HostRemove::Absent => NativeHostRemove::Absent,
            HostRemove::PreconditionFailed { current } => {
                NativeHostRemove::PreconditionFailed { current_sha256: hex(&current) }
            }
            HostRemove::IsRoot => NativeHostRemove::IsRoot,
        }
    }
}

/// `revert`. `versionId` absent: the memory already held that content.
#[napi]
pub enum NativeRevert {
    Reverted {
        version_id: Option<String>,
    },
    UnknownVersion,
    /// A deletion or a redacted version: no content to go back to.
    NoContent,
    TooLarge {
        limit: f64,
    },
}

impl From<Revert> for NativeRevert {
    fn from(r: Revert) -> Self {
        match r {
            Revert::Reverted { version_id } => NativeRevert::Reverted { version_id: version_id.map(id_hex) },
            Revert::UnknownVersion => NativeRevert::UnknownVersion,
            Revert::NoContent => NativeRevert::NoContent,
            Revert::TooLarge { limit } => NativeRevert::TooLarge { limit: limit as f64 },
        }
    }
}

/// `redact` (no fields, so a string union: `'Redacted' | 'AlreadyRedacted' | 'UnknownVersion'`).
#[napi(string_enum)]
pub enum NativeRedact {
    Redacted,
    AlreadyRedacted,
    UnknownVersion,
}

impl From<Redact> for NativeRedact {
    fn from(r: Redact) -> Self {
        match r {
            Redact::Redacted => NativeRedact::Redacted,
            Redact::AlreadyRedacted => NativeRedact::AlreadyRedacted,
            Redact::UnknownVersion => NativeRedact::UnknownVersion,
        }
    }
}
