//! The metadata every memory carries beside its content. The backend stores it as opaque bytes;
//! its layout is this crate's: 40 bytes little-endian, size u64, lines u64, `created_ms` i64,
//! `updated_ms` i64, `accessed_ms` i64 (0 = never). Size and line count are stored so listings,
//! usage and expiry never read a value. Bytes past the 40 are ignored, so a later version can
//! append fields without a backend format change.
//!
//! Appended by version history (`history/`): `memory_id` u128 (16 bytes, stable across renames),
//! then `version_id` u128 (16 bytes, 0 = the content was written while history was off). A memory
//! never touched with history on has the 40 bytes only.

use crate::{Error, Result};

/// Encoded length of the fields this version writes.
pub(crate) const META_BYTES: usize = 40;
/// With the memory id and the version id appended.
const META_BYTES_HISTORY: usize = META_BYTES + 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemMeta {
    pub size: u64,
    pub lines: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub accessed_ms: i64,
    /// Set once history recorded a version of this memory; kept by every later write.
    pub memory_id: Option<u128>,
    /// The version holding the current content; None when it was written with history off.
    pub version_id: Option<u128>,
}

impl MemMeta {
    pub fn for_content(content: &str, created_ms: i64, updated_ms: i64, accessed_ms: i64) -> Self {
        MemMeta {
            size: content.len() as u64,
            lines: crate::edit::newlines(content) + 1,
            created_ms,
            updated_ms,
            accessed_ms,
            memory_id: None,
            version_id: None,
        }
    }

    /// New content for an existing memory: keeps its identity, forgets its version (the caller's
    /// history hook, when on, stamps the new one).
    pub fn rewritten(content: &str, old: MemMeta, updated_ms: i64) -> Self {
        MemMeta {
            memory_id: old.memory_id,
            ..MemMeta::for_content(content, old.created_ms, updated_ms, old.accessed_ms)
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(if self.memory_id.is_some() { META_BYTES_HISTORY } else { META_BYTES });
        m.extend_from_slice(&self.size.to_le_bytes());
        m.extend_from_slice(&self.lines.to_le_bytes());
        m.extend_from_slice(&self.created_ms.to_le_bytes());
        m.extend_from_slice(&self.updated_ms.to_le_bytes());
        m.extend_from_slice(&self.accessed_ms.to_le_bytes());
        if let Some(id) = self.memory_id {
            m.extend_from_slice(&id.to_le_bytes());
            m.extend_from_slice(&self.version_id.unwrap_or(0).to_le_bytes());
        }
        m
    }

    /// The memory metadata at `key` in `view`, if a memory is there: the one reader every module
    /// uses (commands, host edits, history).
    pub fn stored(view: &dyn crate::ReadView, key: &[u8]) -> Result<Option<Self>> {
        view.meta(key)?.map(|m| MemMeta::decode(key, &m)).transpose()
    }

    /// The metadata stored at `key` (named in the error when it is too short to be ours).
    pub fn decode(key: &[u8], m: &[u8]) -> Result<Self> {
        if m.len() < META_BYTES {
            return Err(Error::Corruption(format!(
                "memory metadata of {} bytes, expected at least {META_BYTES} (key {})",
                m.len(),
                String::from_utf8_lossy(key)
            )));
        }
        let u = |i: usize| u64::from_le_bytes(m[i..i + 8].try_into().expect("8 bytes"));
        let i = |at: usize| i64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"));
        let id = |i: usize| {
            let v = u128::from_le_bytes(m[i..i + 16].try_into().expect("16 bytes"));
            (v != 0).then_some(v)
        };
        let history = m.len() >= META_BYTES_HISTORY;
        Ok(MemMeta {
            memory_id: if history { id(40) } else { None },
            version_id: if history { id(56) } else { None },
            size: u(0),
            lines: u(8),
            created_ms: i(16),
            updated_ms: i(24),
            accessed_ms: i(32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_fixed() {
        let m = MemMeta {
            size: 1,
            lines: 2,
            created_ms: -3,
            updated_ms: 4,
            accessed_ms: 0,
            memory_id: None,
            version_id: None,
        };
        let e = m.encode();
        assert_eq!(e.len(), META_BYTES);
        assert_eq!(&e[0..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[8..16], &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[16..24], &(-3i64).to_le_bytes());
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), m);
    }

    #[test]
    fn later_fields_are_ignored_and_short_metadata_is_corruption() {
        let m = MemMeta {
            size: 7,
            lines: 1,
            created_ms: 1,
            updated_ms: 2,
            accessed_ms: 3,
            memory_id: None,
            version_id: None,
        };
        let mut longer = m.encode();
        longer.extend_from_slice(b"future");
        assert_eq!(MemMeta::decode(b"k", &longer).unwrap(), m);
        let with_ids = MemMeta { memory_id: Some(9), version_id: Some(1 << 100), ..m };
        let mut e = with_ids.encode();
        assert_eq!(e.len(), META_BYTES_HISTORY);
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), with_ids);
        e.extend_from_slice(b"future");
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), with_ids);
        assert!(matches!(MemMeta::decode(b"k", &[0; 39]), Err(Error::Corruption(_))));
    }

    #[test]
    fn counts_bytes_and_lines() {
        let m = MemMeta::for_content("é\na\r\n", 0, 0, 0);
        assert_eq!((m.size, m.lines), (6, 3));
        assert_eq!(MemMeta::for_content("", 0, 0, 0).lines, 1);
    }
}
