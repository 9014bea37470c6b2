//! The store as it was at an instant, rebuilt from the versions: a read view holding, for each
//! memory, the content of its newest version recorded at or before that instant (none when that
//! version is a deletion or redacted). The commands' own view code runs on it, so it answers
//! with the strings the model would have seen — as far as history recorded: memories written
//! only while history was off, and versions dropped by retention, are not in it.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, ControlFlow};

use crate::backend::{ReadView, Visit};
use crate::commands::corrupt;
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::{Memories, Result};

use super::record::{Operation, Version, version_key, versions_prefix};

/// key → (content, metadata), like a backend's state.
struct AtView {
    map: BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>,
}

impl ReadView for AtView {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).map(|(v, _)| v.clone()))
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).map(|(_, m)| m.clone()))
    }

    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        let range = self.map.range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded));
        for (key, (_, meta)) in range.take_while(|(k, _)| k.starts_with(prefix)) {
            if visit(key, meta) == ControlFlow::Break(()) {
                break;
            }
        }
        Ok(())
    }
}

impl Memories {
    /// A read-only view of this scope as history recorded it at `when_ms`; run
    /// [`Memories::view_at`] on it.
    pub fn at(&self, when_ms: i64) -> Result<Box<dyn ReadView>> {
        let view = self.backend.read()?;
        // memory id → its newest version at `when_ms`; versions scan in id (= commit) order.
        let mut newest: HashMap<u128, Version> = HashMap::new();
        try_scan(&*view, &versions_prefix(&self.options.scope), &mut |key, meta| {
            let v = Version::decode(key, meta)?;
            if v.created_ms <= when_ms {
                newest.insert(v.memory_id, v);
            }
            Ok(())
        })?;
        let mut live: Vec<Version> = newest
            .into_values()
            .filter(|v| v.operation != Operation::Deleted && v.redacted_ms.is_none() && v.path.is_some())
            .collect();
        live.sort_by_key(|v| v.id);
        let mut map = BTreeMap::new();
        for v in live {
            let vkey = version_key(&self.options.scope, v.id);
            let content = view.get(&vkey)?.ok_or_else(|| corrupt(&vkey, "version record without a value"))?;
            let text = std::str::from_utf8(&content).map_err(|_| corrupt(&vkey, "version content is not UTF-8"))?;
            let meta = MemMeta::for_content(text, v.created_ms, v.created_ms, 0);
            map.insert(self.key(v.path.as_deref().expect("filtered")), (content, meta.encode()));
        }
        Ok(Box::new(AtView { map }))
    }
}
