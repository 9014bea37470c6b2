//! The six commands. Each checks in the contract's order (§4), decides inside one backend
//! transaction, and changes the store with exactly one commit.

use crate::backend::{Committed, DirSummary, ReadView, WriteSet};
use crate::edit;
use crate::keys::{check_normalised, key, subtree_prefix};
use crate::listing::{scan_summary, try_scan};
use crate::meta::MemMeta;
use crate::{
    Create, Delete, Error, Insert, MAX_PATH_BYTES, MAX_VIEW_LINES, Memories, ROOT, Rename, Result, StrReplace, View,
};

impl Memories {
    pub fn view(&self, path: &str) -> Result<View> {
        check_normalised(path)?;
        let key = self.key(path);
        loop {
            if self.options.track_access {
                // Reading is the access: a file view decides on the newest state and stamps it in
                // the same transaction, one commit, answered once durable.
                let stamped = self.transact(|view, ws| {
                    let Some(meta) = file_meta(view, path, &key)? else { return Ok(None) };
                    let shown = Self::file_view(view, &key, meta)?;
                    if let View::File { content, .. } = &shown {
                        let meta = MemMeta { accessed_ms: self.clock.now_ms(), ..meta };
                        ws.touch(key.clone(), content.as_bytes().to_vec(), meta);
                    }
                    Ok(Some(shown))
                })?;
                if let Some(shown) = stamped {
                    return Ok(shown);
                }
                // Not a file at the newest state: a directory view, answered on the durable state
                // like any other (the transaction returned once that state was durable).
            }
            // Queried at once and dropped: the snapshot may be the first query's (one round
            // trip less over PostgreSQL), and a file view reads the value it finds the metadata of.
            let view = self.backend.read_deferred()?;
            view.prefetch_value(&key);
            return match file_meta(&*view, path, &key)? {
                Some(meta) if !self.options.track_access => Self::file_view(&*view, &key, meta),
                // Created since the transaction above: go round and stamp it.
                Some(_) => continue,
                None => Ok(dir_view(self.summary(&*view, path)?, path)),
            };
        }
    }

    /// The view, when answering it is bounded and needs nothing built: a memory's file view of at
    /// most `max_bytes`, or a listing of at most `max_lines` lines from an aggregate that is
    /// already current. None otherwise — a larger memory, a scan, an index still to build, or a
    /// view that commits (`track_access`) — so the caller can run it off its latency-sensitive thread.
    pub fn view_if_cheap(&self, path: &str, max_bytes: u64, max_lines: u64) -> Result<Option<View>> {
        check_normalised(path)?;
        if self.options.track_access {
            return Ok(None);
        }
        let key = self.key(path);
        // Another process's commits to catch up on first: that waits for its commit lock.
        let Some(view) = self.backend.read_without_waiting()? else { return Ok(None) };
        if let Some(meta) = file_meta(&*view, path, &key)? {
            if meta.size > max_bytes {
                return Ok(None);
            }
            return Self::file_view(&*view, &key, meta).map(Some);
        }
        if !self.options.listing_index {
            return Ok(None);
        }
        let ready = view.dir_summary_if_ready(&self.options.scope, path, max_lines)?;
        Ok(ready.map(|summary| dir_view(summary, path)))
    }

    /// A read-only view on a pinned read view (never records access).
    pub fn view_at(&self, view: &dyn ReadView, path: &str) -> Result<View> {
        check_normalised(path)?;
        let key = self.key(path);
        match file_meta(view, path, &key)? {
            Some(meta) => Self::file_view(view, &key, meta),
            None => Ok(dir_view(self.summary(view, path)?, path)),
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
        let key = self.key(path);
        if !self.options.create_overwrites {
            // The backend decides the absence at commit (`WriteSet::write_new`): the body reads
            // nothing at the target, so concurrent creates of neighbours do not conflict.
            let committed = self.backend.transact_new(&mut |view, ws| {
                let now = self.clock.now_ms();
                ws.write_new(key.clone(), file_text.as_bytes().to_vec(), MemMeta::for_content(file_text, now, now, 0));
                self.stage_versions(view, ws)?;
                Ok(())
            })?;
            if committed == Committed::Taken {
                // Refusals are not the hot path: the row that was there is read, so a damaged one
                // answers Corruption naming its key, as every other command over it does.
                MemMeta::stored(&*self.backend.read_deferred()?, &key)?;
                return Ok(Create::Exists);
            }
            return Ok(Create::Created);
        }
        self.transact(|view, ws| {
            let old = MemMeta::stored(view, &key)?;
            if old.is_some() && !self.options.create_overwrites {
                return Ok(Create::Exists);
            }
            let now = self.clock.now_ms();
            let meta = match old {
                Some(m) => MemMeta::rewritten(file_text, m, now),
                None => MemMeta::for_content(file_text, now, now, 0),
            };
            ws.write(key.clone(), file_text.as_bytes().to_vec(), meta, old.as_ref());
            Ok(Create::Created)
        })
    }

    pub fn str_replace(&self, path: &str, old_str: &str, new_str: &str) -> Result<StrReplace> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(StrReplace::NotFound);
        }
        let key = self.key(path);
        self.transact(|view, ws| {
            // The content is read right after: one query for both over PostgreSQL.
            view.prefetch_value(&key);
            let Some(meta) = MemMeta::stored(view, &key)? else {
                return Ok(StrReplace::NotFound);
            };
            let content = read(view, &key)?;
            if old_str.is_empty() {
                return Ok(StrReplace::NoMatch);
            }
            let pos = match edit::find_unique(&content, old_str) {
                edit::Found::Nowhere => return Ok(StrReplace::NoMatch),
                edit::Found::Once(pos) => pos,
                edit::Found::Several => {
                    return Ok(StrReplace::Multiple { lines: edit::occurrence_lines(&content, old_str, &mut 0) });
                }
            };
            let limit = self.options.max_memory_bytes;
            if (content.len() - old_str.len() + new_str.len()) as u64 > limit {
                return Ok(StrReplace::TooLarge { limit });
            }
            let (edited, line) = edit::replace_at(&content, pos, old_str.len(), new_str);
            let (first_line, snippet) = edit::snippet_at(&edited, pos, line);
            self.rewrite(ws, &key, edited, meta);
            Ok(StrReplace::Edited { first_line, snippet })
        })
    }

    /// `insert_line` is None when the model sent something that is not an integer.
    pub fn insert(&self, path: &str, insert_line: Option<i64>, insert_text: &str) -> Result<Insert> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(Insert::NotFound);
        }
        let key = self.key(path);
        self.transact(|view, ws| {
            // The content is read right after: one query for both over PostgreSQL.
            view.prefetch_value(&key);
            let Some(meta) = MemMeta::stored(view, &key)? else {
                return Ok(Insert::NotFound);
            };
            let content = read(view, &key)?;
            let edited = match edit::insert_at(&content, insert_line, insert_text) {
                Ok(edited) => edited,
                Err(count) => return Ok(Insert::InvalidLine { count }),
            };
            let limit = self.options.max_memory_bytes;
            if edited.len() as u64 > limit {
                return Ok(Insert::TooLarge { limit });
            }
            self.rewrite(ws, &key, edited, meta);
            Ok(Insert::Edited)
        })
    }

    pub fn delete(&self, path: &str) -> Result<Delete> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(Delete::IsRoot);
        }
        self.transact(|view, ws| {
            let doomed = self.at_or_under(view, path)?;
            if doomed.is_empty() {
                return Ok(Delete::NotFound);
            }
            let count = doomed.len() as u64;
            for (key, old) in doomed {
                ws.remove(key, &old);
            }
            Ok(Delete::Deleted { count })
        })
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
        let old_key_len = self.key(old_path).len();
        let new_key = self.key(new_path);
        self.transact(|view, ws| {
            let moving = self.at_or_under(view, old_path)?;
            if moving.is_empty() {
                return Ok(Rename::NotFound);
            }
            // A descendant moved past the path limit could never be viewed or deleted again: the
            // whole rename is refused like any other unusable destination (CONTRACT.md, Choices).
            let longest_tail = moving.iter().map(|(k, _)| k.len() - old_key_len).max().unwrap_or(0);
            if new_path.len() + longest_tail > MAX_PATH_BYTES {
                return Ok(Rename::DestinationExists);
            }
            if !self.at_or_under(view, new_path)?.is_empty() {
                return Ok(Rename::DestinationExists);
            }
            let now = self.clock.now_ms();
            for (key, meta) in &moving {
                // No backend has a move: the value must be read to be put under its new key.
                let value = view.get(key)?.ok_or_else(|| corrupt(key, "metadata without a value"))?;
                let mut moved = new_key.clone();
                moved.extend_from_slice(&key[old_key_len..]);
                ws.moved(key.clone(), moved, value, MemMeta { updated_ms: now, ..*meta });
            }
            Ok(Rename::Renamed { count: moving.len() as u64 })
        })
    }

    pub(crate) fn key(&self, path: &str) -> Vec<u8> {
        key(&self.options.scope, path)
    }

    /// Runs `body` as one backend transaction and returns what its last run decided.
    pub(crate) fn transact<T>(&self, body: impl FnMut(&dyn ReadView, &mut WriteSet) -> Result<T>) -> Result<T> {
        Ok(self.transact_recorded(body)?.0)
    }

    /// [`Memories::transact`], with the ids of the versions history staged in the same commit.
    pub(crate) fn transact_recorded<T>(
        &self,
        mut body: impl FnMut(&dyn ReadView, &mut WriteSet) -> Result<T>,
    ) -> Result<(T, Vec<u128>)> {
        let mut decided = None;
        self.backend.transact(&mut |view, ws| {
            let answer = body(view, ws)?;
            decided = Some((answer, self.stage_versions(view, ws)?));
            Ok(())
        })?;
        Ok(decided.expect("a committed transaction ran its body"))
    }

    /// The directory at `path`: from the backend's summary (its listing index) when the handler
    /// asks for it, else from a scan.
    fn summary(&self, view: &dyn ReadView, path: &str) -> Result<DirSummary> {
        if self.options.listing_index {
            view.dir_summary(&self.options.scope, path)
        } else {
            scan_summary(view, &self.options.scope, path)
        }
    }

    fn file_view(view: &dyn ReadView, key: &[u8], meta: MemMeta) -> Result<View> {
        if meta.lines > MAX_VIEW_LINES {
            return Ok(View::TooManyLines);
        }
        Ok(View::File { content: read(view, key)? })
    }

    /// The memory at `path` and every memory under it, hidden ones included: key and metadata.
    fn at_or_under(&self, view: &dyn ReadView, path: &str) -> Result<Vec<(Vec<u8>, MemMeta)>> {
        let key = self.key(path);
        let mut found = Vec::new();
        if let Some(meta) = MemMeta::stored(view, &key)? {
            found.push((key, meta));
        }
        try_scan(view, &subtree_prefix(&self.options.scope, path), &mut |k, meta| {
            found.push((k.to_vec(), MemMeta::decode(k, meta)?));
            Ok(())
        })?;
        Ok(found)
    }

    /// Stages `content` (moved in: an edit's new text is not copied again) over `old`.
    fn rewrite(&self, ws: &mut WriteSet, key: &[u8], content: String, old: MemMeta) {
        let meta = MemMeta::rewritten(&content, old, self.clock.now_ms());
        ws.write(key.to_vec(), content.into_bytes(), meta, Some(&old));
    }
}

pub(crate) fn read(view: &dyn ReadView, key: &[u8]) -> Result<String> {
    let bytes = view.get(key)?.ok_or_else(|| corrupt(key, "metadata without a value"))?;
    String::from_utf8(bytes).map_err(|_| corrupt(key, "memory content is not UTF-8"))
}

pub(crate) fn corrupt(key: &[u8], reason: &str) -> Error {
    Error::Corruption(format!("{reason} (key {})", String::from_utf8_lossy(key)))
}

/// The memory at `path`, unless it is the root (always a directory).
fn file_meta(view: &dyn ReadView, path: &str, key: &[u8]) -> Result<Option<MemMeta>> {
    if path == ROOT {
        return Ok(None);
    }
    MemMeta::stored(view, key)
}

/// A directory view, or `NotFound` when nothing visible is under it (except the root).
fn dir_view(summary: DirSummary, path: &str) -> View {
    if summary.memories > 0 {
        View::Dir { total: summary.bytes, entries: summary.entries }
    } else if path == ROOT {
        View::Dir { total: 0, entries: Vec::new() }
    } else {
        View::NotFound
    }
}
