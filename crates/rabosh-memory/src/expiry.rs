//! Usage and expiry: both decided from metadata alone.

use crate::keys::subtree_prefix;
use crate::listing::{scan_usage, try_scan};
use crate::meta::MemMeta;
use crate::{Error, Memories, ROOT, Result, Usage};

/// What an expiry did. The deletions are committed whatever happens to `reclaim_error`: giving
/// the space back is a separate step that may fail on its own (a full disk), and the caller must
/// learn both facts, never a bare error that hides committed deletions.
#[derive(Debug)]
pub struct Expired {
    /// Memories deleted, in one commit.
    pub count: u64,
    /// Why reclaiming the freed space failed, if it did.
    pub reclaim_error: Option<Error>,
}

impl Memories {
    pub fn usage(&self) -> Result<Usage> {
        let view = self.backend.read()?;
        if self.options.listing_index {
            return view.usage(&self.options.scope);
        }
        scan_usage(&*view, &self.options.scope)
    }

    /// Deletes every memory last updated (or accessed, with `track_access`) before `instant_ms`,
    /// then asks the backend to reclaim the space.
    ///
    /// With `track_access`, a memory's last use is the later of updatedAt and accessedAt, so
    /// neither a recent read nor a recent edit lets it expire.
    pub fn expire_before(&self, instant_ms: i64) -> Result<Expired> {
        let prefix = subtree_prefix(&self.options.scope, ROOT);
        let count = self.transact(|view, ws| {
            try_scan(view, &prefix, &mut |key, meta| {
                let meta = MemMeta::decode(key, meta)?;
                let last_use =
                    if self.options.track_access { meta.updated_ms.max(meta.accessed_ms) } else { meta.updated_ms };
                if last_use < instant_ms {
                    ws.remove(key.to_vec(), &meta);
                }
                Ok(())
            })?;
            Ok(ws.len() as u64)
        })?;
        // After the commit: commands need not wait for the space to come back. History retention
        // runs here too (its own commit); its reclaim is the one below.
        let reclaim_error = self.prune_history_unreclaimed().and_then(|_| self.backend.reclaim()).err();
        Ok(Expired { count, reclaim_error })
    }
}
