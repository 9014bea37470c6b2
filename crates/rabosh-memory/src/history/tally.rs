//! A running count of each scope's history, kept in the key every recording commit already
//! writes (`h:{scope}:last`), so `history_usage()` and the store-wide figure in `stats()` read a
//! few keys instead of every version (stats runs on the JS thread).
//!
//! `h:{scope}:last` metadata, little-endian: last id u128, then versions u64 and content bytes
//! u64. A store written before the counts has the 16-byte id only: its counts are recounted from
//! the versions by the next commit that records (and by a reader meanwhile).

use std::ops::ControlFlow;

use crate::backend::{ReadView, WriteSet};
use crate::listing::try_scan;
use crate::{Error, Result};

use super::HistoryUsage;
use super::record::{Version, last_id_key, versions_prefix};

const BYTES: usize = 16 + 8 + 8;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// The last version id given out in the scope (ids never go below it).
    pub last: u128,
    pub usage: HistoryUsage,
}

impl Tally {
    pub fn read(view: &dyn ReadView, scope: &str) -> Result<Tally> {
        let Some(m) = view.meta(&last_id_key(scope))? else { return Ok(Tally::default()) };
        let id = m.get(..16).ok_or_else(|| Error::Corruption(format!("history counter of scope {scope} too short")))?;
        let last = u128::from_le_bytes(id.try_into().expect("16 bytes"));
        if m.len() >= BYTES {
            let u = |i: usize| u64::from_le_bytes(m[i..i + 8].try_into().expect("8 bytes"));
            return Ok(Tally { last, usage: HistoryUsage { versions: u(16), bytes: u(24) } });
        }
        Ok(Tally { last, usage: recount(view, scope)? })
    }

    pub fn stage(&self, ws: &mut WriteSet, scope: &str) {
        let mut m = Vec::with_capacity(BYTES);
        m.extend_from_slice(&self.last.to_le_bytes());
        m.extend_from_slice(&self.usage.versions.to_le_bytes());
        m.extend_from_slice(&self.usage.bytes.to_le_bytes());
        ws.put(last_id_key(scope), Vec::new(), m);
    }

    pub fn add(&mut self, size: u64) {
        self.usage.versions += 1;
        self.usage.bytes += size;
    }

    pub fn remove(&mut self, size: u64) {
        self.usage.versions = self.usage.versions.saturating_sub(1);
        self.usage.bytes = self.usage.bytes.saturating_sub(size);
    }
}

/// The scope's versions counted one by one (stores written before the counter).
fn recount(view: &dyn ReadView, scope: &str) -> Result<HistoryUsage> {
    let mut usage = HistoryUsage::default();
    try_scan(view, &versions_prefix(scope), &mut |key, meta| {
        usage.versions += 1;
        usage.bytes += Version::decode(key, meta)?.size;
        Ok(())
    })?;
    Ok(usage)
}

/// Every scope's counts together: one reverse seek per scope to find it (keys under `h:` are
/// `h:{scope}:…` and a scope holds no `:`), then its counter.
pub(crate) fn store_usage(view: &dyn ReadView) -> Result<HistoryUsage> {
    let mut total = HistoryUsage::default();
    let mut before: Option<Vec<u8>> = None;
    loop {
        let mut found = None;
        view.scan_prefix_rev(b"h:", before.as_deref(), &mut |key, _| {
            found = Some(key.to_vec());
            ControlFlow::Break(())
        })?;
        let Some(key) = found else { return Ok(total) };
        let rest = &key[2..];
        let colon = rest.iter().position(|&b| b == b':').unwrap_or(rest.len());
        let scope = std::str::from_utf8(&rest[..colon])
            .map_err(|_| Error::Corruption(format!("history key {} of no scope", String::from_utf8_lossy(&key))))?;
        let usage = Tally::read(view, scope)?.usage;
        total.versions += usage.versions;
        total.bytes += usage.bytes;
        before = Some(format!("h:{scope}:").into_bytes());
    }
}
