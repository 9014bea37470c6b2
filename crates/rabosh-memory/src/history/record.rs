//! How a version is stored: key `h:{scope}:v:{id as 32 hex digits}` (hex of a big-endian id, so
//! key order is id order is commit order), the content as the value (empty once redacted or for
//! a deletion), and the record below as the metadata, so listing versions reads no content.
//!
//! Record layout, little-endian: format u8 (1), operation u8, flags u8 (1 hash, 2 path, 4 actor),
//! `memory_id` u128, `created_ms` i64, `redacted_ms` i64 (0 = not redacted), size u64, then the hash
//! (32 bytes), the path (u16 length + UTF-8) and the actor (u8 length + type, u16 length + id) when
//! their flag is set.

use sha2::{Digest, Sha256};

use crate::{Error, Result};

const FORMAT: u8 = 1;
const FIXED: usize = 3 + 16 + 8 + 8 + 8;

/// What a version did to its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Created,
    Modified,
    Renamed,
    Deleted,
}

impl Operation {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Created => "created",
            Operation::Modified => "modified",
            Operation::Renamed => "renamed",
            Operation::Deleted => "deleted",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Operation> {
        [Operation::Created, Operation::Modified, Operation::Renamed, Operation::Deleted]
            .into_iter()
            .find(|o| o.as_str() == s)
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Option<Operation> {
        [Operation::Created, Operation::Modified, Operation::Renamed, Operation::Deleted].get(c as usize).copied()
    }
}

/// The longest actor type, in UTF-8 bytes (its length is one byte in the record).
pub const MAX_ACTOR_TYPE_BYTES: usize = 255;
/// The longest actor id, in UTF-8 bytes: with the longest path and type the record stays near
/// 2.4 KiB, far below the 64 KiB a key's metadata may hold, so no accepted actor can make a
/// write fail.
pub const MAX_ACTOR_ID_BYTES: usize = 1024;

/// Who made a change, as the handler was told (`actor: { type, id }`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Actor {
    pub kind: String,
    pub id: String,
}

impl Actor {
    /// Refuses an actor the record cannot hold: a type empty or over [`MAX_ACTOR_TYPE_BYTES`],
    /// an id over [`MAX_ACTOR_ID_BYTES`].
    pub fn check(&self) -> Result<()> {
        if self.kind.is_empty() || self.kind.len() > MAX_ACTOR_TYPE_BYTES {
            return Err(Error::InvalidOption {
                option: "actor.type",
                value: format!("{} bytes (must be 1 to {MAX_ACTOR_TYPE_BYTES})", self.kind.len()),
            });
        }
        if self.id.len() > MAX_ACTOR_ID_BYTES {
            return Err(Error::InvalidOption {
                option: "actor.id",
                value: format!("{} bytes (at most {MAX_ACTOR_ID_BYTES})", self.id.len()),
            });
        }
        Ok(())
    }
}

/// One version, without its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub id: u128,
    pub memory_id: u128,
    /// None once redacted.
    pub path: Option<String>,
    pub operation: Operation,
    pub actor: Option<Actor>,
    pub created_ms: i64,
    /// Hex SHA-256 of the content; None for a deletion or once redacted.
    pub content_sha256: Option<[u8; 32]>,
    pub size: u64,
    pub redacted_ms: Option<i64>,
}

impl Version {
    pub fn sha256_hex(&self) -> Option<String> {
        self.content_sha256.as_ref().map(hex)
    }

    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(FIXED + 32 + self.path.as_ref().map_or(0, |p| p.len() + 2));
        let flags = u8::from(self.content_sha256.is_some())
            | (u8::from(self.path.is_some()) << 1)
            | (u8::from(self.actor.is_some()) << 2);
        m.extend_from_slice(&[FORMAT, self.operation.code(), flags]);
        m.extend_from_slice(&self.memory_id.to_le_bytes());
        m.extend_from_slice(&self.created_ms.to_le_bytes());
        m.extend_from_slice(&self.redacted_ms.unwrap_or(0).to_le_bytes());
        m.extend_from_slice(&self.size.to_le_bytes());
        if let Some(h) = &self.content_sha256 {
            m.extend_from_slice(h);
        }
        if let Some(p) = &self.path {
            m.extend_from_slice(&(p.len() as u16).to_le_bytes());
            m.extend_from_slice(p.as_bytes());
        }
        if let Some(a) = &self.actor {
            m.push(a.kind.len() as u8);
            m.extend_from_slice(a.kind.as_bytes());
            m.extend_from_slice(&(a.id.len() as u16).to_le_bytes());
            m.extend_from_slice(a.id.as_bytes());
        }
        m
    }

    pub fn decode(key: &[u8], m: &[u8]) -> Result<Version> {
        let bad =
            |why: &str| Error::Corruption(format!("version record: {why} (key {})", String::from_utf8_lossy(key)));
        let id = parse_key_id(key).ok_or_else(|| bad("key without an id"))?;
        if m.len() < FIXED || m[0] != FORMAT {
            return Err(bad("unknown format or too short"));
        }
        let operation = Operation::from_code(m[1]).ok_or_else(|| bad("unknown operation"))?;
        let flags = m[2];
        let i64_at = |i: usize| i64::from_le_bytes(m[i..i + 8].try_into().expect("8 bytes"));
        let memory_id = u128::from_le_bytes(m[3..19].try_into().expect("16 bytes"));
        let created_ms = i64_at(19);
        let redacted = i64_at(27);
        let size = u64::from_le_bytes(m[35..43].try_into().expect("8 bytes"));
        let mut at = FIXED;
        let mut take = |n: usize| -> Result<&[u8]> {
            let s = m.get(at..at + n).ok_or_else(|| bad("truncated"))?;
            at += n;
            Ok(s)
        };
        let content_sha256 = if flags & 1 != 0 { Some(take(32)?.try_into().expect("32 bytes")) } else { None };
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| bad("text is not UTF-8"));
        let path = if flags & 2 != 0 {
            let n = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            Some(text(take(n)?)?)
        } else {
            None
        };
        let actor = if flags & 4 != 0 {
            let n = take(1)?[0] as usize;
            let kind = text(take(n)?)?;
            let n = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            Some(Actor { kind, id: text(take(n)?)? })
        } else {
            None
        };
        Ok(Version {
            id,
            memory_id,
            path,
            operation,
            actor,
            created_ms,
            content_sha256,
            size,
            redacted_ms: (redacted != 0).then_some(redacted),
        })
    }
}

#[must_use]
pub fn sha256(content: &[u8]) -> [u8; 32] {
    Sha256::digest(content).into()
}

#[must_use]
pub fn hex(bytes: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [b >> 4, b & 15]).map(|d| char::from(DIGITS[usize::from(d)])).collect()
}

#[must_use]
pub fn id_hex(id: u128) -> String {
    format!("{id:032x}")
}

#[must_use]
pub fn parse_id(s: &str) -> Option<u128> {
    (s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u128::from_str_radix(s, 16).ok()).flatten()
}

pub fn versions_prefix(scope: &str) -> Vec<u8> {
    format!("h:{scope}:v:").into_bytes()
}

pub fn version_key(scope: &str, id: u128) -> Vec<u8> {
    format!("h:{scope}:v:{}", id_hex(id)).into_bytes()
}

/// Holds the last id given out in the scope, so ids stay ordered whatever the clock does.
pub fn last_id_key(scope: &str) -> Vec<u8> {
    format!("h:{scope}:last").into_bytes()
}

fn parse_key_id(key: &[u8]) -> Option<u128> {
    let tail = key.get(key.len().checked_sub(32)?..)?;
    parse_id(std::str::from_utf8(tail).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_shape() {
        let full = Version {
            id: 7 << 80 | 3,
            memory_id: 5,
            path: Some("/memories/é.md".into()),
            operation: Operation::Renamed,
            actor: Some(Actor { kind: "session".into(), id: "s-1".into() }),
            created_ms: 1_700_000_000_000,
            content_sha256: Some(sha256(b"x")),
            size: 1,
            redacted_ms: None,
        };
        let key = version_key("default", full.id);
        assert_eq!(Version::decode(&key, &full.encode()).unwrap(), full);
        let bare = Version { path: None, actor: None, content_sha256: None, redacted_ms: Some(9), ..full.clone() };
        assert_eq!(Version::decode(&key, &bare.encode()).unwrap(), bare);
        assert!(Version::decode(&key, &full.encode()[..FIXED + 3]).is_err());
    }

    #[test]
    fn hash_is_the_standard_sha256() {
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(parse_id(&id_hex(u128::MAX - 1)), Some(u128::MAX - 1));
        assert_eq!(parse_id("xyz"), None);
    }
}
