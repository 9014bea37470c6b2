//! History as a property of the store, not of whoever opened it: one reserved key, `c:history`,
//! written once by the commit that turns history on and read by every handler inside each of its
//! transactions, so every handler over the store records, whatever its opener asked for.
//!
//! Record (the key's metadata; the value is empty), little-endian: format u8 (1), flags u8 (1
//! `retain_days` set, 2 `max_versions_per_memory` set), `since_ms` i64 (when it was turned on: every
//! change from then on is recorded), `retain_days` f64, `max_versions` u64.
//!
//! Once on, history stays on: an opener asking for `history: false` is refused (see
//! [`settle_history`]); one giving explicit retention rewrites the retention.

use crate::backend::{Backend, ReadView, WriteSet};
use crate::{Error, Result};

use super::HistoryOptions;

/// The reserved key (the `c:` space holds store-wide settings; memories are `m:`, versions `h:`).
pub(crate) const SETTINGS_KEY: &[u8] = b"c:history";
const FORMAT: u8 = 1;
const BYTES: usize = 2 + 8 + 8 + 8;

/// What the store records about its history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistorySettings {
    pub options: HistoryOptions,
    /// When history was turned on: every change from then on is recorded.
    pub since_ms: i64,
}

/// What an opener asks of the store's history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HistoryRequest {
    /// `history: false`: refused on a store that records history.
    Off,
    /// `history: true`: on, keeping the retention the store has.
    On,
    /// `history: { … }`: on, with exactly this retention.
    OnWith(HistoryOptions),
}

impl HistorySettings {
    fn encode(&self) -> Vec<u8> {
        let o = &self.options;
        let flags = u8::from(o.retain_days.is_some()) | (u8::from(o.max_versions_per_memory.is_some()) << 1);
        let mut m = Vec::with_capacity(BYTES);
        m.extend_from_slice(&[FORMAT, flags]);
        m.extend_from_slice(&self.since_ms.to_le_bytes());
        m.extend_from_slice(&o.retain_days.unwrap_or(0.0).to_le_bytes());
        m.extend_from_slice(&o.max_versions_per_memory.unwrap_or(0).to_le_bytes());
        m
    }

    fn decode(m: &[u8]) -> Result<HistorySettings> {
        if m.len() < BYTES || m[0] != FORMAT {
            return Err(Error::Corruption(format!("history settings of {} bytes in an unknown format", m.len())));
        }
        let flags = m[1];
        let eight = |i: usize| -> [u8; 8] { m[i..i + 8].try_into().expect("8 bytes") };
        Ok(HistorySettings {
            options: HistoryOptions {
                retain_days: (flags & 1 != 0).then(|| f64::from_le_bytes(eight(10))),
                max_versions_per_memory: (flags & 2 != 0).then(|| u64::from_le_bytes(eight(18))),
            },
            since_ms: i64::from_le_bytes(eight(2)),
        })
    }
}

/// The store's history settings in `view`; None: the store does not record history.
pub fn read_settings(view: &dyn ReadView) -> Result<Option<HistorySettings>> {
    view.meta(SETTINGS_KEY)?.map(|m| HistorySettings::decode(&m)).transpose()
}

/// Stages the settings that turn history on now, in `ws` (the caller's commit).
pub(crate) fn stage_on(ws: &mut WriteSet, options: HistoryOptions, now_ms: i64) -> HistorySettings {
    let settings = HistorySettings { options, since_ms: now_ms };
    ws.put(SETTINGS_KEY.to_vec(), Vec::new(), settings.encode());
    settings
}

/// Reconciles what an opener asked with what the store records, in one transaction, and returns
/// the store's settings after it (None: history off).
///
/// - no request: the store's settings, unchanged (reads only);
/// - `Off` on a store without history: nothing; on a store with history: refused with
///   `InvalidOption` (history once on stays on for every opener);
/// - `On` / `OnWith` on a store without history: turns it on from now (one commit);
/// - `On` on a store with history: unchanged; `OnWith` with other retention: rewrites the
///   retention (one commit), keeping when history was turned on.
pub fn settle_history(
    backend: &dyn Backend,
    request: Option<HistoryRequest>,
    now_ms: i64,
) -> Result<Option<HistorySettings>> {
    let Some(request) = request else { return read_settings(&*backend.read()?) };
    let mut settled = None;
    backend.transact(&mut |view, ws| {
        ws.clear();
        let stored = read_settings(view)?;
        settled = match (request, stored) {
            (HistoryRequest::Off, None) => None,
            (HistoryRequest::Off, Some(_)) => {
                return Err(Error::InvalidOption {
                    option: "history",
                    value: "false (this store records history, and history once on stays on for every opener; \
                            omit the option)"
                        .into(),
                });
            }
            (HistoryRequest::On, None) => Some(stage_on(ws, HistoryOptions::default(), now_ms)),
            (HistoryRequest::OnWith(options), None) => Some(stage_on(ws, options, now_ms)),
            (HistoryRequest::On, Some(s)) => Some(s),
            (HistoryRequest::OnWith(options), Some(s)) if options == s.options => Some(s),
            (HistoryRequest::OnWith(options), Some(s)) => {
                let s = HistorySettings { options, ..s };
                ws.put(SETTINGS_KEY.to_vec(), Vec::new(), s.encode());
                Some(s)
            }
        };
        Ok(())
    })?;
    Ok(settled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_a_setting_of_the_seam() {
        // Backends keep settings apart by this prefix (PostgreSQL: their own index).
        assert!(SETTINGS_KEY.starts_with(crate::backend::SETTINGS_PREFIX));
    }

    #[test]
    fn round_trips() {
        for s in [
            HistorySettings { options: HistoryOptions::default(), since_ms: -5 },
            HistorySettings {
                options: HistoryOptions { retain_days: Some(0.5), max_versions_per_memory: Some(3) },
                since_ms: 1_700_000_000_000,
            },
        ] {
            assert_eq!(HistorySettings::decode(&s.encode()).unwrap(), s);
        }
        assert!(HistorySettings::decode(&[2; BYTES]).is_err());
    }
}
