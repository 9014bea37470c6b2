//! The six commands. Each checks in the contract's order (§4), decides on one snapshot taken
//! under the write lock, and changes the store with exactly one commit.

use rabosh::{Batch, Snapshot};

use crate::edit;
use crate::keys::{check_normalised, key, subtree_prefix};
use crate::listing::scan_dir;
use crate::meta::MemMeta;
use crate::store::WriteGuard;
use crate::tree::{Entry, emit};
use crate::{Create, Delete, Error, Insert, MAX_VIEW_LINES, Memories, ROOT, Rename, Result, StrReplace, View};

/// What a view found at its path, before any value is read.
enum Resolved {
    File(Snapshot, MemMeta),
    Listed(View),
}

impl Memories {
    pub fn view(&self, path: &str) -> Result<View> {
        check_normalised(path)?;
        loop {
            if self.options.track_access {
                // Reading is the access: a file view decides on the newest state under the write
                // lock and stamps it in the same command, one commit, answered once durable.
                let mut write = self.store.lock_write();
                let snap = write.latest()?;
                if let Some(meta) = file_meta(&snap, path, &self.key(path)) {
                    let view = self.file_view(&snap, path, meta)?;
                    match &view {
                        View::File { content, .. } => {
                            let stamped = MemMeta { accessed_ms: self.clock.now_ms(), ..meta };
                            let mut batch = Batch::new();
                            batch.put(self.key(path), content.as_bytes(), stamped.encode());
                            self.store.commit(write, snap.seq(), batch)?;
                        }
                        _ => {
                            drop(write);
                            self.store.engine().wait_durable(snap.seq())?;
                        }
                    }
                    return Ok(view);
                }
                drop(write);
                // Not a file at the newest state: a directory view, answered on the durable
                // state like any other once that state has caught up with what was decided on.
                self.store.engine().wait_durable(snap.seq())?;
            }
            return match self.resolve(path)? {
                Resolved::File(snap, meta) if !self.options.track_access => self.file_view(&snap, path, meta),
                // Created since the check above: go round and stamp it.
                Resolved::File(..) => continue,
                Resolved::Listed(view) => Ok(view),
            };
        }
    }

    /// The view, when answering it is bounded and needs nothing built: a memory's file view of at
    /// most `max_bytes`, or a listing of at most `max_lines` lines from a listing index that is
    /// already current. None otherwise — a larger memory, a scan, an index still to build, or a
    /// view that commits (track_access) — so the caller can run it off its latency-sensitive thread.
    pub fn view_if_cheap(&self, path: &str, max_bytes: u64, max_lines: u64) -> Result<Option<View>> {
        check_normalised(path)?;
        if self.options.track_access {
            return Ok(None);
        }
        let key = self.key(path);
        let snap = self.store.engine().snapshot()?;
        if let Some(meta) = file_meta(&snap, path, &key) {
            if meta.size > max_bytes {
                return Ok(None);
            }
            return self.file_view(&snap, path, meta).map(Some);
        }
        if !self.options.listing_index {
            return Ok(None);
        }
        let listed = self.store.with_index_if_built(&self.options.scope, |snap, index, visited| {
            if file_meta(snap, path, &key).is_some() {
                return None; // created since the check above: the full view answers it
            }
            let node = index.find(path, visited);
            if node.is_some_and(|n| listing_lines_exceed(n, max_lines)) {
                return None;
            }
            Some(dir_view(node, path, visited))
        })?;
        Ok(listed.flatten())
    }

    /// A read-only view at a pinned snapshot (answered by a scan; never records access).
    pub fn view_at(&self, snap: &Snapshot, path: &str) -> Result<View> {
        check_normalised(path)?;
        match self.resolve_on(snap.clone(), path) {
            Resolved::File(snap, meta) => self.file_view(&snap, path, meta),
            Resolved::Listed(view) => Ok(view),
        }
    }

    pub fn create(&self, path: &str, file_text: &str) -> Result<Create> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(Create::Exists);
        }
        let limit = self.options.max_memory_bytes;
        if file_text.len() as u64 > limit {
            return Ok(Create::TooLarge { limit });
        }
        let mut write = self.store.lock_write();
        let snap = write.latest()?;
        let key = self.key(path);
        let old = snap.meta(&key).map(|m| MemMeta::decode(&m));
        if old.is_some() && !self.options.create_overwrites {
            return Ok(Create::Exists);
        }
        let now = self.clock.now_ms();
        let (created, accessed) = old.map_or((now, 0), |m| (m.created_ms, m.accessed_ms));
        let meta = MemMeta::for_content(file_text, created, now, accessed);
        let mut batch = Batch::new();
        batch.put(key, file_text.as_bytes(), meta.encode());
        self.store.commit(write, snap.seq(), batch)?;
        Ok(Create::Created)
    }

    pub fn str_replace(&self, path: &str, old_str: &str, new_str: &str) -> Result<StrReplace> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(StrReplace::NotFound);
        }
        let mut write = self.store.lock_write();
        let snap = write.latest()?;
        let key = self.key(path);
        let Some(meta) = snap.meta(&key).map(|m| MemMeta::decode(&m)) else {
            return Ok(StrReplace::NotFound);
        };
        let content = self.read(&snap, &key)?;
        if old_str.is_empty() {
            return Ok(StrReplace::NoMatch);
        }
        match edit::count_upto_two(&content, old_str) {
            0 => return Ok(StrReplace::NoMatch),
            1 => {}
            _ => {
                return Ok(StrReplace::Multiple { lines: edit::occurrence_lines(&content, old_str) });
            }
        }
        let Some((edited, line)) = edit::replace_first(&content, old_str, new_str) else {
            return Ok(StrReplace::NoMatch);
        };
        let limit = self.options.max_memory_bytes;
        if edited.len() as u64 > limit {
            return Ok(StrReplace::TooLarge { limit });
        }
        self.rewrite(write, &snap, key, &edited, meta)?;
        let (first_line, snippet) = edit::snippet(&edited, line);
        Ok(StrReplace::Edited { first_line, snippet })
    }

    /// `insert_line` is None when the model sent something that is not an integer.
    pub fn insert(&self, path: &str, insert_line: Option<i64>, insert_text: &str) -> Result<Insert> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(Insert::NotFound);
        }
        let mut write = self.store.lock_write();
        let snap = write.latest()?;
        let key = self.key(path);
        let Some(meta) = snap.meta(&key).map(|m| MemMeta::decode(&m)) else {
            return Ok(Insert::NotFound);
        };
        let content = self.read(&snap, &key)?;
        let edited = match edit::insert_line(&content, insert_line, insert_text) {
            Ok(edited) => edited,
            Err(count) => return Ok(Insert::InvalidLine { count }),
        };
        let limit = self.options.max_memory_bytes;
        if edited.len() as u64 > limit {
            return Ok(Insert::TooLarge { limit });
        }
        self.rewrite(write, &snap, key, &edited, meta)?;
        Ok(Insert::Edited)
    }

    pub fn delete(&self, path: &str) -> Result<Delete> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(Delete::IsRoot);
        }
        let mut write = self.store.lock_write();
        let snap = write.latest()?;
        let doomed = self.at_or_under(&snap, path);
        if doomed.is_empty() {
            return Ok(Delete::NotFound);
        }
        let count = doomed.len() as u64;
        let mut batch = Batch::new();
        for key in doomed {
            batch.delete(key);
        }
        self.store.commit(write, snap.seq(), batch)?;
        Ok(Delete::Deleted { count })
    }

    pub fn rename(&self, old_path: &str, new_path: &str) -> Result<Rename> {
        check_normalised(old_path)?;
        check_normalised(new_path)?;
        if old_path == ROOT {
            return Ok(Rename::IsRoot);
        }
        if new_path == ROOT || new_path == old_path {
            return Ok(Rename::DestinationExists);
        }
        if new_path.strip_prefix(old_path).is_some_and(|rest| rest.starts_with('/')) {
            return Ok(Rename::Inside);
        }
        let mut write = self.store.lock_write();
        let snap = write.latest()?;
        let moving = self.at_or_under(&snap, old_path);
        if moving.is_empty() {
            return Ok(Rename::NotFound);
        }
        if !self.at_or_under(&snap, new_path).is_empty() {
            return Ok(Rename::DestinationExists);
        }
        let now = self.clock.now_ms();
        let old_key_len = self.key(old_path).len();
        let new_key = self.key(new_path);
        let mut batch = Batch::new();
        for key in &moving {
            // The engine has no move: the value must be read to be put under its new key.
            let value = snap.get(key)?.ok_or_else(|| self.corrupt(key, "metadata without a value"))?;
            let meta = snap.meta(key).map(|m| MemMeta::decode(&m)).expect("listed by this snapshot");
            let mut moved = new_key.clone();
            moved.extend_from_slice(&key[old_key_len..]);
            batch.put(moved, value, MemMeta { updated_ms: now, ..meta }.encode());
            batch.delete(key.clone());
        }
        self.store.commit(write, snap.seq(), batch)?;
        Ok(Rename::Renamed { count: moving.len() as u64 })
    }

    pub(crate) fn key(&self, path: &str) -> Vec<u8> {
        key(&self.options.scope, path)
    }

    fn resolve(&self, path: &str) -> Result<Resolved> {
        if !self.options.listing_index {
            return Ok(self.resolve_on(self.store.engine().snapshot()?, path));
        }
        let key = self.key(path);
        self.store.with_index(&self.options.scope, |snap, index, visited| match file_meta(snap, path, &key) {
            Some(meta) => Resolved::File(snap.clone(), meta),
            None => Resolved::Listed(dir_view(index.find(path, visited), path, visited)),
        })
    }

    fn resolve_on(&self, snap: Snapshot, path: &str) -> Resolved {
        match file_meta(&snap, path, &self.key(path)) {
            Some(meta) => Resolved::File(snap, meta),
            None => {
                let node = scan_dir(&snap, &self.options.scope, path);
                Resolved::Listed(dir_view(Some(&node), path, &mut 0))
            }
        }
    }

    fn file_view(&self, snap: &Snapshot, path: &str, meta: MemMeta) -> Result<View> {
        if meta.lines > MAX_VIEW_LINES {
            return Ok(View::TooManyLines);
        }
        let content = self.read(snap, &self.key(path))?;
        Ok(View::File { content, lines: meta.lines })
    }

    /// Keys of the memory at `path` and of every memory under it, hidden ones included.
    fn at_or_under(&self, snap: &Snapshot, path: &str) -> Vec<Vec<u8>> {
        let key = self.key(path);
        let mut keys: Vec<Vec<u8>> = Vec::new();
        if snap.contains(&key) {
            keys.push(key);
        }
        let prefix = subtree_prefix(&self.options.scope, path);
        keys.extend(snap.scan_prefix(&prefix).map(|(k, _)| k.to_vec()));
        keys
    }

    fn rewrite(&self, write: WriteGuard<'_>, snap: &Snapshot, key: Vec<u8>, content: &str, old: MemMeta) -> Result<()> {
        let meta = MemMeta::for_content(content, old.created_ms, self.clock.now_ms(), old.accessed_ms);
        let mut batch = Batch::new();
        batch.put(key, content.as_bytes(), meta.encode());
        self.store.commit(write, snap.seq(), batch)?;
        Ok(())
    }

    pub(crate) fn read(&self, snap: &Snapshot, key: &[u8]) -> Result<String> {
        let bytes = snap.get(key)?.ok_or_else(|| self.corrupt(key, "metadata without a value"))?;
        String::from_utf8(bytes).map_err(|_| self.corrupt(key, "memory content is not UTF-8"))
    }

    fn corrupt(&self, key: &[u8], reason: &str) -> Error {
        Error::Engine(rabosh::Error::Corruption {
            file: self.store.engine().dir().to_path_buf(),
            offset: 0,
            reason: format!("{reason} (key {})", String::from_utf8_lossy(key)),
        })
    }
}

/// The memory at `path`, unless it is the root (always a directory).
fn file_meta(snap: &Snapshot, path: &str, key: &[u8]) -> Option<MemMeta> {
    if path == ROOT {
        return None;
    }
    snap.meta(key).map(|m| MemMeta::decode(&m))
}

/// A directory view of `node`, or NotFound when nothing visible is under it (except the root).
fn dir_view(node: Option<&Entry>, path: &str, visited: &mut u64) -> View {
    match node {
        Some(node) if node.vis_count > 0 => View::Dir { total: node.vis_bytes, entries: emit(node, visited) },
        _ if path == ROOT => View::Dir { total: 0, entries: Vec::new() },
        _ => View::NotFound,
    }
}

/// Whether a listing of `dir` may print more than `max` lines (each name at depth 1 and 2 prints
/// at most two: its memory and its directory), looking at no more names than it needs to.
fn listing_lines_exceed(dir: &Entry, max: u64) -> bool {
    let mut lines = 0u64;
    for child in dir.children.values() {
        lines += 2 + 2 * child.children.len() as u64;
        if lines > max {
            return true;
        }
    }
    false
}
