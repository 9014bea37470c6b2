//! Usage and expiry: both decided from metadata alone.

use rabosh::Batch;

use crate::keys::subtree_prefix;
use crate::meta::MemMeta;
use crate::{Memories, ROOT, Result, Usage};

impl Memories {
    pub fn usage(&self) -> Result<Usage> {
        if self.options.listing_index {
            return self.store.with_index(&self.options.scope, |_, index, _| Usage {
                memories: index.root.all_count,
                bytes: index.root.all_bytes,
            });
        }
        let snap = self.store.engine().snapshot()?;
        let mut usage = Usage::default();
        for (_, meta) in snap.scan_prefix(&subtree_prefix(&self.options.scope, ROOT)) {
            usage.memories += 1;
            usage.bytes += MemMeta::decode(meta).size;
        }
        Ok(usage)
    }

    /// Deletes every memory last updated (or accessed, with track_access) before `instant_ms`.
    ///
    /// With track_access, a memory's last use is the later of updatedAt and accessedAt, so
    /// neither a recent read nor a recent edit lets it expire.
    pub fn expire_before(&self, instant_ms: i64) -> Result<u64> {
        let count = {
            let mut write = self.store.lock_write();
            let snap = write.latest()?;
            let mut batch = Batch::new();
            for (key, meta) in snap.scan_prefix(&subtree_prefix(&self.options.scope, ROOT)) {
                let meta = MemMeta::decode(meta);
                let last_use =
                    if self.options.track_access { meta.updated_ms.max(meta.accessed_ms) } else { meta.updated_ms };
                if last_use < instant_ms {
                    batch.delete(key.to_vec());
                }
            }
            let count = batch.len() as u64;
            if count > 0 {
                self.store.commit(write, snap.seq(), batch)?;
            }
            count
        };
        // Outside the write lock: commands need not wait for the space to come back.
        self.store.engine().compact()?;
        Ok(count)
    }
}
