//! The synced record (`SYNCED`): how far the active segment is known durable.
//!
//! After every successful fsync of the active segment the writer overwrites this small record
//! in place, without an fsync of its own: after a process crash the page cache still holds it;
//! after a power loss it may be stale-low (or torn, failing its CRC), which only makes recovery
//! more lenient, never wrong — it is written only after the bytes it names are durable. `close()`
//! writes and fsyncs it. Recovery reads damage or a truncation below the recorded length as
//! corruption (acknowledged data), not as a torn tail.

use crate::io::bytes::{crc, put_u32, put_u64};
use crate::io::vfs::{OpenMode, VFile, Vfs, read_exact_at, write_all_at};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const SYNCED: &str = "SYNCED";
const MAGIC: &[u8; 8] = b"RABOSHSY";
const LEN: usize = 32;

/// Which segment, and how many of its bytes are durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncedPoint {
    pub segment: u64,
    pub len: u64,
}

pub fn encode(p: SyncedPoint) -> Vec<u8> {
    let mut out = Vec::with_capacity(LEN);
    out.extend_from_slice(MAGIC);
    put_u64(&mut out, p.segment);
    put_u64(&mut out, p.len);
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    put_u32(&mut out, 0);
    out
}

pub fn decode(b: &[u8]) -> Option<SyncedPoint> {
    if b.len() < LEN || &b[..8] != MAGIC || b[28..32] != [0; 4] {
        return None;
    }
    if crc(&[&b[..24]]) != u32::from_le_bytes(b[24..28].try_into().unwrap()) {
        return None;
    }
    Some(SyncedPoint {
        segment: u64::from_le_bytes(b[8..16].try_into().unwrap()),
        len: u64::from_le_bytes(b[16..24].try_into().unwrap()),
    })
}

/// The open record file.
#[derive(Debug)]
pub struct SyncedFile {
    file: Arc<dyn VFile>,
    pub path: PathBuf,
}

impl SyncedFile {
    /// Opens the record, creating it when absent. Its name needs no fsync of its own: a lost
    /// name reads as "no record", the lenient case.
    pub fn open(vfs: &dyn Vfs, dir: &Path) -> io::Result<SyncedFile> {
        let path = dir.join(SYNCED);
        let file = match vfs.open(&path, OpenMode::ReadWrite) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => vfs.open(&path, OpenMode::CreateNew)?,
            r => r?,
        };
        Ok(SyncedFile { file, path })
    }

    /// The recorded point; `None` when absent or unreadable (then nothing is known synced).
    pub fn read(&self) -> Option<SyncedPoint> {
        let mut b = [0u8; LEN];
        read_exact_at(&*self.file, &mut b, 0).ok()?;
        decode(&b)
    }

    pub fn write(&self, p: SyncedPoint) -> io::Result<()> {
        write_all_at(&*self.file, &encode(p), 0)
    }

    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_damage() {
        let p = SyncedPoint { segment: 7, len: 12345 };
        let b = encode(p);
        assert_eq!(b.len(), LEN);
        assert_eq!(decode(&b), Some(p));
        for i in 0..LEN {
            let mut d = b.clone();
            d[i] ^= 0x10;
            assert_eq!(decode(&d), None, "byte {i}");
        }
        assert_eq!(decode(&b[..LEN - 1]), None);
    }
}
