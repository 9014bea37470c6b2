//! The metadata every memory carries beside its content. The backend stores it as opaque bytes;
//! its layout is this crate's. Size and line count are stored so listings, usage and expiry never
//! read a value. Two layouts, told apart by their length:
//!
//! - **Fixed** (40 bytes or more; every build writes it for a memory with history ids, and on
//!   backends that keep no feed rows): little-endian size u64, lines u64, `created_ms` i64,
//!   `updated_ms` i64, `accessed_ms` i64 (0 = never). Appended by version history (`history/`):
//!   `memory_id` u128 (stable across renames), then `version_id` u128 (0 = the content was written
//!   while history was off). Bytes past the 72 are ignored.
//! - **Compact** (under 40 bytes; written by the embedded and in-memory backends for a memory
//!   without history ids, since issue 36): a tag byte, then unsigned LEB128 varints: size, lines,
//!   `created_ms` zigzagged, then `updated_ms − created_ms` zigzagged only if flag bit 0, then
//!   `accessed_ms − updated_ms` zigzagged only if flag bit 1 (absent: never accessed), then
//!   the position of the memory's change feed entry (`feed.rs`: no `g:` row is kept for it).
//!   The tag's high nibble is the layout (1), its low nibble the flags (bits 2 and 3 unused).
//!   A compact encoding that would reach 40 bytes (extreme values) is written fixed instead.
//!
//! The format gate. A build from before the compact layout refuses any metadata under 40 bytes
//! as `Corruption` ("expected at least 40"): it fails loudly on a memory a newer build wrote
//! compact, never reads it as fixed. That is why a compact encoding must stay under 40 bytes,
//! and why a memory with history ids (32 bytes of them) stays fixed. This build reads both and
//! refuses, as `UnsupportedFormat`, a short encoding whose tag names another layout or a flag it
//! does not know, or that has bytes after its last field: a later layout takes a new tag (or a
//! flag), and no build rewrites a memory whose metadata it could not read whole.

use crate::{Error, Result};

/// Length of the fixed layout without history ids; every shorter encoding is compact.
pub(crate) const META_BYTES: usize = 40;
/// With the memory id and the version id appended.
const META_BYTES_HISTORY: usize = META_BYTES + 32;
/// The compact layout's tag: layout 1 in the high nibble.
const COMPACT: u8 = 0x10;
/// Flag: `updated_ms` differs from `created_ms` (its difference follows).
const UPDATED: u8 = 1;
/// Flag: the memory was accessed (`accessed_ms − updated_ms` follows).
const ACCESSED: u8 = 2;

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
    /// The position of this memory's change feed entry, when its metadata carries it (the
    /// compact layout): set by the feed when it stages the commit (`feed.rs`), kept by an access
    /// stamp. None: the entry, if any, is named by the path's `g:` row.
    pub feed_position: Option<u64>,
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
            feed_position: None,
        }
    }

    /// New content for an existing memory: keeps its identity, forgets its version (the caller's
    /// history hook, when on, stamps the new one) and its feed position (the commit's feed
    /// stamps the new one).
    pub fn rewritten(content: &str, old: MemMeta, updated_ms: i64) -> Self {
        MemMeta {
            memory_id: old.memory_id,
            ..MemMeta::for_content(content, old.created_ms, updated_ms, old.accessed_ms)
        }
    }

    /// The compact layout when this metadata can be written so (a feed position, no history
    /// ids, under 40 bytes), else the fixed one.
    pub fn encode(&self) -> Vec<u8> {
        if let (Some(position), None) = (self.feed_position, self.memory_id)
            && let Some(compact) = self.packed(position)
        {
            return compact;
        }
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

    fn packed(&self, position: u64) -> Option<Vec<u8>> {
        let updated = self.updated_ms.wrapping_sub(self.created_ms);
        let accessed = self.accessed_ms.wrapping_sub(self.updated_ms);
        let mut tag = COMPACT;
        if updated != 0 {
            tag |= UPDATED;
        }
        if self.accessed_ms != 0 {
            tag |= ACCESSED;
        }
        let mut m = Vec::with_capacity(16);
        m.push(tag);
        put_varint(&mut m, self.size);
        put_varint(&mut m, self.lines);
        put_varint(&mut m, zigzag(self.created_ms));
        if updated != 0 {
            put_varint(&mut m, zigzag(updated));
        }
        if self.accessed_ms != 0 {
            put_varint(&mut m, zigzag(accessed));
        }
        put_varint(&mut m, position);
        (m.len() < META_BYTES).then_some(m)
    }

    /// The memory metadata at `key` in `view`, if a memory is there: the one reader every module
    /// uses (commands, host edits, history).
    pub fn stored(view: &dyn crate::ReadView, key: &[u8]) -> Result<Option<Self>> {
        view.meta(key)?.map(|m| MemMeta::decode(key, &m)).transpose()
    }

    /// The metadata stored at `key`, in either layout (named in the error when it is not ours).
    pub fn decode(key: &[u8], m: &[u8]) -> Result<Self> {
        if m.len() < META_BYTES {
            return Self::decode_packed(key, m);
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
            feed_position: None,
        })
    }

    fn decode_packed(key: &[u8], m: &[u8]) -> Result<Self> {
        let name = || String::from_utf8_lossy(key).into_owned();
        let Some((&tag, mut rest)) = m.split_first() else {
            return Err(Error::Corruption(format!("memory metadata of 0 bytes (key {})", name())));
        };
        if tag & 0xf0 != COMPACT || tag & !(COMPACT | UPDATED | ACCESSED) != 0 {
            return Err(Error::UnsupportedFormat(format!(
                "memory metadata of a newer layout (tag {tag:#04x}, key {}): open the store with a newer build",
                name()
            )));
        }
        let mut next = || {
            take_varint(&mut rest).ok_or_else(|| {
                Error::Corruption(format!("memory metadata of {} bytes is cut short (key {})", m.len(), name()))
            })
        };
        let size = next()?;
        let lines = next()?;
        let created_ms = unzigzag(next()?);
        let updated_ms = if tag & UPDATED != 0 { created_ms.wrapping_add(unzigzag(next()?)) } else { created_ms };
        let accessed_ms = if tag & ACCESSED != 0 { updated_ms.wrapping_add(unzigzag(next()?)) } else { 0 };
        let feed_position = Some(next()?);
        if !rest.is_empty() {
            return Err(Error::UnsupportedFormat(format!(
                "memory metadata with {} bytes this build does not know (key {}): open the store with a newer build",
                rest.len(),
                name()
            )));
        }
        Ok(MemMeta {
            size,
            lines,
            created_ms,
            updated_ms,
            accessed_ms,
            memory_id: None,
            version_id: None,
            feed_position,
        })
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)).cast_unsigned()
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1).cast_signed() ^ -(v & 1).cast_signed()
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The next varint of `rest` (advanced past it); None when cut short or longer than a u64's.
fn take_varint(rest: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in rest.iter().enumerate().take(10) {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return None;
        }
        v |= bits << (7 * i);
        if b & 0x80 == 0 {
            *rest = &rest[i + 1..];
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(size: u64, lines: u64, created_ms: i64, updated_ms: i64, accessed_ms: i64) -> MemMeta {
        MemMeta {
            size,
            lines,
            created_ms,
            updated_ms,
            accessed_ms,
            memory_id: None,
            version_id: None,
            feed_position: None,
        }
    }

    #[test]
    fn fixed_layout_is_fixed() {
        let m = plain(1, 2, -3, 4, 0);
        let e = m.encode();
        assert_eq!(e.len(), META_BYTES);
        assert_eq!(&e[0..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[8..16], &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[16..24], &(-3i64).to_le_bytes());
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), m);
    }

    #[test]
    fn fixed_layout_ignores_later_fields_and_keeps_history_ids() {
        let m = plain(7, 1, 1, 2, 3);
        let mut longer = m.encode();
        longer.extend_from_slice(b"future");
        assert_eq!(MemMeta::decode(b"k", &longer).unwrap(), m);
        // History ids keep the fixed layout even with a feed position (which it cannot carry).
        let with_ids = MemMeta { memory_id: Some(9), version_id: Some(1 << 100), ..m };
        let mut e = MemMeta { feed_position: Some(5), ..with_ids }.encode();
        assert_eq!(e.len(), META_BYTES_HISTORY);
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), with_ids);
        e.extend_from_slice(b"future");
        assert_eq!(MemMeta::decode(b"k", &e).unwrap(), with_ids);
    }

    #[test]
    fn compact_layout_round_trips_and_stays_short() {
        let now = 1_780_000_000_000;
        for m in [
            plain(200, 2, now, now, 0),
            plain(0, 1, now, now + 5, now + 9),
            plain(3, 1, now, now - 7, now - 100),
            plain(1 << 40, 1 << 33, -1, i64::MAX, i64::MIN + 1),
            plain(u64::MAX, u64::MAX, i64::MIN, i64::MAX, i64::MIN),
        ] {
            for position in [1, 300, u64::MAX] {
                let with = MemMeta { feed_position: Some(position), ..m };
                let e = with.encode();
                let back = MemMeta::decode(b"k", &e).unwrap();
                if e.len() < META_BYTES {
                    assert_eq!(back, with, "{e:?}");
                } else {
                    // Too large to be compact: written fixed, without the position.
                    assert_eq!((e.len(), back), (META_BYTES, m));
                }
            }
        }
        // The bench's memory: a fifth of the fixed layout.
        let e = MemMeta { feed_position: Some(20), ..plain(200, 2, now, now, 0) }.encode();
        assert_eq!(e.len(), 1 + 2 + 1 + 6 + 1);
        assert_eq!(e[0], COMPACT);
    }

    #[test]
    fn what_is_not_a_layout_this_build_knows_is_refused() {
        let good = MemMeta { feed_position: Some(3), ..plain(5, 1, 10, 11, 12) }.encode();
        assert!(matches!(MemMeta::decode(b"k", &[]), Err(Error::Corruption(_))));
        assert!(matches!(MemMeta::decode(b"k", &good[..good.len() - 1]), Err(Error::Corruption(_))));
        assert!(matches!(MemMeta::decode(b"k", &[0; 39]), Err(Error::UnsupportedFormat(_))));
        for tag in [0x20, 0xf0, COMPACT | 4, COMPACT | 8] {
            let mut e = good.clone();
            e[0] = tag | (e[0] & 3);
            assert!(matches!(MemMeta::decode(b"k", &e), Err(Error::UnsupportedFormat(_))), "{tag:#x}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(matches!(MemMeta::decode(b"k", &longer), Err(Error::UnsupportedFormat(_))));
        // A varint longer than a u64 is damage, not a value.
        let mut e = vec![COMPACT];
        e.extend_from_slice(&[0xff; 10]);
        e.extend_from_slice(&[1, 1, 1]);
        assert!(matches!(MemMeta::decode(b"k", &e), Err(Error::Corruption(_))));
    }

    #[test]
    fn counts_bytes_and_lines() {
        let m = MemMeta::for_content("é\na\r\n", 0, 0, 0);
        assert_eq!((m.size, m.lines), (6, 3));
        assert_eq!(MemMeta::for_content("", 0, 0, 0).lines, 1);
    }
}
