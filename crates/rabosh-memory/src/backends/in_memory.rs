//! A backend in an ordered map, nothing on disk: the proof that the commands depend on the seam
//! only (the command tests run over it and over the engine), and a store for tests of code built
//! on this crate. Each commit publishes a new immutable map; a view holds the one it started on.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::backend::{Backend, ReadView, TxBody, Visit, WriteOp, WriteSet, resume_from};
use crate::feed::{self, ChangePage, Cursor};
use crate::listing_delta::size_changes;
use crate::poison::Poison;
use crate::{Error, Result};

/// key → (value, meta). Values are shared between versions, so a commit copies pointers only.
type Map = BTreeMap<Vec<u8>, (Arc<[u8]>, Arc<[u8]>)>;

/// A published state: the map and the number of commits that made it (the change feed's
/// positions, `feed.rs`).
#[derive(Default)]
struct State {
    map: Map,
    seq: u64,
}

#[derive(Default)]
pub struct InMemoryBackend {
    current: RwLock<Arc<State>>,
    /// Held by a transaction from its decision to its publication.
    writer: Mutex<()>,
    poison: Poison,
    commits: AtomicU64,
    values_read: Arc<AtomicU64>,
}

impl InMemoryBackend {
    #[must_use]
    pub fn new() -> InMemoryBackend {
        InMemoryBackend::default()
    }

    /// Commits published so far (a transaction that staged nothing is not one).
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Values read by views so far (metadata reads do not count).
    pub fn values_read(&self) -> u64 {
        self.values_read.load(Ordering::Relaxed)
    }

    fn view(&self) -> MapView {
        let state = self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        MapView { state, values_read: self.values_read.clone() }
    }
}

struct MapView {
    state: Arc<State>,
    values_read: Arc<AtomicU64>,
}

impl ReadView for MapView {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let value = self.state.map.get(key).map(|(v, _)| v.to_vec());
        if value.is_some() {
            self.values_read.fetch_add(1, Ordering::Relaxed);
        }
        Ok(value)
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.state.map.get(key).map(|(_, m)| m.to_vec()))
    }

    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        let range = self.state.map.range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded));
        for (key, (_, meta)) in range.take_while(|(k, _)| k.starts_with(prefix)) {
            if visit(key, meta).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn scan_prefix_rev(&self, prefix: &[u8], before: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        let end = rabosh::prefix_successor(prefix);
        let upper = match (before, end.as_deref()) {
            (Some(b), Some(e)) => Bound::Excluded(b.min(e)),
            (Some(b), None) | (None, Some(b)) => Bound::Excluded(b),
            (None, None) => Bound::Unbounded,
        };
        let range = self.state.map.range::<[u8], _>((Bound::Included(prefix), upper));
        for (key, (_, meta)) in range.rev() {
            if visit(key, meta).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        let from = resume_from(prefix, after);
        let range = self.state.map.range::<[u8], _>((Bound::Included(from.as_slice()), Bound::Unbounded));
        for (key, (_, meta)) in range.take_while(|(k, _)| k.starts_with(prefix)) {
            if visit(key, meta).is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl Backend for InMemoryBackend {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        self.poison.check()?;
        Ok(Box::new(self.view()))
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.poison.check()?;
        let _writer = self.writer.lock().map_err(|_| Error::Poisoned("a panic while committing".into()))?;
        let _on_panic = self.poison.on_panic();
        let view = self.view();
        let mut staged = WriteSet::default();
        body(&view, &mut staged)?;
        if staged.is_empty() {
            return Ok(());
        }
        // No listing aggregate here (views scan), but the same rule as every backend: a memory
        // row staged without an intent is refused.
        size_changes(&staged)?;
        let position = view.state.seq + 1;
        let feed = feed::stage_rows(&view, &mut staged, position, view.state.seq == 0)?;
        let mut next = view.state.map.clone();
        for op in staged.into_ops().into_iter().chain(feed) {
            match op {
                WriteOp::Put { key, value, meta } => {
                    next.insert(key, (value.into(), meta.into()));
                }
                WriteOp::Delete { key } => {
                    next.remove(&key);
                }
            }
        }
        *self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Arc::new(State { map: next, seq: position });
        self.commits.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn changes(&self, scope: &str, since: &Cursor, limit: usize) -> Result<ChangePage> {
        self.poison.check()?;
        let view = self.view();
        let end = view.state.seq + 1;
        feed::read_rows(&view, scope, since, limit, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::ControlFlow;

    #[test]
    fn a_view_keeps_its_state_and_a_failed_body_commits_nothing() {
        let b = InMemoryBackend::new();
        b.transact(&mut |_, ws| {
            ws.put(b"k".to_vec(), b"v".to_vec(), b"m".to_vec());
            Ok(())
        })
        .unwrap();
        let before = b.read().unwrap();
        let err = b.transact(&mut |_, ws| {
            ws.delete(b"k".to_vec());
            Err(Error::InvalidArgument("no".into()))
        });
        assert!(err.is_err());
        b.transact(&mut |_, ws| {
            ws.put(b"k2".to_vec(), b"v2".to_vec(), b"m2".to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(before.get(b"k").unwrap(), Some(b"v".to_vec()));
        assert_eq!(before.meta(b"k2").unwrap(), None);
        let mut seen = Vec::new();
        b.read()
            .unwrap()
            .scan_prefix(b"k", &mut |k, m| {
                seen.push((k.to_vec(), m.to_vec()));
                ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(seen, vec![(b"k".to_vec(), b"m".to_vec()), (b"k2".to_vec(), b"m2".to_vec())]);
        assert_eq!(b.commits(), 2);
    }
}
