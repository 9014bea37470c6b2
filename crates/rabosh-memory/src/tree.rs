//! The aggregated directory node both listings answer from: the scan builds one fresh (two levels
//! deep) for each view, the listing index keeps a whole tree current across commits.
//!
//! Memories outnumber directories (the bench's nested store: 100 per directory), so a name with
//! nothing below it is not a node: it is 16 bytes in its directory's sorted file table plus its
//! name's bytes in the directory's arena, no allocation of its own. Only names with something
//! below them are [`Dir`] nodes carrying aggregates.

use std::cmp::Ordering;

use crate::DirEntry;
use crate::keys::hidden;

/// Orders names by UTF-16 code units (JavaScript's string order) without re-encoding them. UTF-8
/// byte order agrees with it except where one side's character is above U+FFFF (lead byte
/// 0xF0–0xF4, a surrogate pair in UTF-16) and the other's is U+E000–U+FFFF (lead 0xEE or 0xEF):
/// UTF-16 puts the surrogates first. At the first differing byte both characters start at the
/// same offset (the prefix is equal), so a difference in a continuation byte means equal leads,
/// the same class, and byte order holds.
// Out of line: kept small, the listing's merge step inlines into its loop.
#[inline(never)]
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let Some(i) = first_difference(a, b) else {
        return a.len().cmp(&b.len());
    };
    let (x, y) = (a[i], b[i]);
    let astral = |c: u8| c >= 0xF0;
    let high_bmp = |c: u8| c == 0xEE || c == 0xEF;
    if (astral(x) && high_bmp(y)) || (high_bmp(x) && astral(y)) { y.cmp(&x) } else { x.cmp(&y) }
}

/// The first index where `a` and `b` differ, within the shorter; eight bytes at a time, since
/// names in one directory often share a long prefix (`note000…`).
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
    let mut i = 0;
    while i + 8 <= n {
        let diff = word(a, i) ^ word(b, i);
        if diff != 0 {
            return Some(i + (diff.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..n).find(|&j| a[j] != b[j])
}

/// One memory with nothing below it: where its name lies in the arena, and its size.
#[derive(Debug, Clone, Copy)]
struct FileItem {
    start: u32,
    len: u32,
    size: u64,
}

/// What a batch of removals took from below one node: every memory, and those visible from it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Removed {
    all_count: u64,
    all_bytes: u64,
    vis_count: u64,
    vis_bytes: u64,
}

impl Removed {
    fn add(&mut self, size: u64, visible: bool) {
        self.all_count += 1;
        self.all_bytes += size;
        if visible {
            self.vis_count += 1;
            self.vis_bytes += size;
        }
    }
}

/// A directory's memories that have nothing below them, in UTF-16 name order. Names live in one
/// arena; a removed name stays there as garbage until garbage is half the arena.
#[derive(Debug, Clone, Default)]
pub(crate) struct Files {
    arena: String,
    items: Vec<FileItem>,
    garbage: usize,
}

impl Files {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    #[inline]
    fn name(&self, item: &FileItem) -> &str {
        &self.arena[item.start as usize..(item.start + item.len) as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.items.iter().map(|it| (self.name(it), it.size))
    }

    /// Ok(position) of `name`, or Err(where it would go). Names mostly arrive in order (a build
    /// scans keys in byte order), so the end is tried first.
    fn find(&self, name: &str) -> Result<usize, usize> {
        match self.items.last() {
            None => return Err(0),
            Some(last) if utf16_cmp(self.name(last), name) == Ordering::Less => return Err(self.items.len()),
            _ => {}
        }
        self.items.binary_search_by(|it| utf16_cmp(self.name(it), name))
    }

    fn insert_at(&mut self, at: usize, name: &str, size: u64) {
        // Names are at most MAX_PATH_BYTES and the arena is repacked at half garbage, so 4 GiB
        // would take millions of long names in one directory.
        let start = u32::try_from(self.arena.len()).expect("a directory's names exceed 4 GiB");
        self.arena.push_str(name);
        self.items.insert(at, FileItem { start, len: name.len() as u32, size });
    }

    fn remove_at(&mut self, at: usize) -> u64 {
        let item = self.items.remove(at);
        self.garbage += item.len as usize;
        if self.garbage * 2 > self.arena.len() {
            self.pack_arena();
        }
        item.size
    }

    /// Removes every name of `names` (sorted, no repeats) that is here, in one pass; the others
    /// are left in `names`. Adds what it removed to `removed`.
    fn remove_sorted(&mut self, names: &mut Vec<&str>, removed: &mut Removed) {
        let mut wanted = names.iter().peekable();
        let mut missing = Vec::new();
        let (arena, garbage) = (&self.arena, &mut self.garbage);
        self.items.retain(|item| {
            let name = &arena[item.start as usize..(item.start + item.len) as usize];
            // One comparison per file while names remain to be found.
            while let Some(w) = wanted.peek() {
                match utf16_cmp(w, name) {
                    Ordering::Less => missing.push(*wanted.next().expect("peeked")),
                    Ordering::Greater => return true,
                    Ordering::Equal => {
                        wanted.next();
                        *garbage += item.len as usize;
                        removed.add(item.size, !hidden(name));
                        return false;
                    }
                }
            }
            true
        });
        missing.extend(wanted);
        *names = missing;
        if self.garbage * 2 > self.arena.len() {
            self.pack_arena();
        }
    }

    fn pack_arena(&mut self) {
        let mut arena = String::with_capacity(self.arena.len() - self.garbage);
        for item in &mut self.items {
            let start = arena.len() as u32;
            arena.push_str(&self.arena[item.start as usize..(item.start + item.len) as usize]);
            item.start = start;
        }
        self.arena = arena;
        self.garbage = 0;
    }

    fn shrink(&mut self) {
        if self.garbage > 0 {
            self.pack_arena();
        }
        self.arena.shrink_to_fit();
        self.items.shrink_to_fit();
    }
}

impl PartialEq for Files {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Files {}

/// A name with something below it. "Visible" counts are relative to this node: memories below it
/// whose path below it has no hidden segment. A hidden name of its own is the parent's business.
/// In a tree the index keeps, every `Dir` has something below it (`all_count > 0`): one whose
/// last memory below goes becomes a file again, or nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Dir {
    /// Its name in its parent (empty for the node a tree starts at).
    pub name: Box<str>,
    /// Size of the memory at exactly this path.
    pub memory: Option<u64>,
    pub vis_bytes: u64,
    pub vis_count: u64,
    /// Every memory strictly below, hidden ones included.
    pub all_bytes: u64,
    pub all_count: u64,
    /// Names with nothing below them; never also in `dirs`.
    pub files: Files,
    /// Names with something below them, in UTF-16 name order.
    pub dirs: Vec<Dir>,
}

/// One name under a directory, in either table.
pub(crate) enum Child<'a> {
    File(&'a str, u64),
    Dir(&'a Dir),
}

impl Dir {
    fn find_dir(&self, name: &str) -> Result<usize, usize> {
        match self.dirs.last() {
            None => return Err(0),
            Some(last) if utf16_cmp(&last.name, name) == Ordering::Less => return Err(self.dirs.len()),
            _ => {}
        }
        self.dirs.binary_search_by(|d| utf16_cmp(&d.name, name))
    }

    /// The directory node `name`, made one if needed (a memory of that name moves into it).
    pub(crate) fn dir_mut(&mut self, name: &str) -> &mut Dir {
        let at = match self.find_dir(name) {
            Ok(at) => at,
            Err(at) => {
                let memory = self.files.find(name).ok().map(|i| self.files.remove_at(i));
                self.dirs.insert(at, Dir { name: name.into(), memory, ..Dir::default() });
                at
            }
        };
        &mut self.dirs[at]
    }

    /// Records the memory at `name` (replacing its size); counts nothing.
    pub(crate) fn set_memory(&mut self, name: &str, size: u64) {
        if let Ok(at) = self.find_dir(name) {
            self.dirs[at].memory = Some(size);
            return;
        }
        match self.files.find(name) {
            Ok(at) => self.files.items[at].size = size,
            Err(at) => self.files.insert_at(at, name, size),
        }
    }

    /// Counts a memory of `size` strictly below this node; `visible`: its path below this node
    /// has no hidden segment.
    pub(crate) fn count_below(&mut self, size: u64, visible: bool) {
        self.all_count += 1;
        self.all_bytes += size;
        if visible {
            self.vis_count += 1;
            self.vis_bytes += size;
        }
    }

    /// Adds the memory at `segs` below this node (not already there), counting it in every node
    /// on its way; names more than `keep` levels down only feed the aggregates of the node at
    /// depth `keep`.
    pub(crate) fn add(&mut self, segs: &[&str], size: u64, keep: usize) {
        self.count_below(size, segs.iter().all(|s| !hidden(s)));
        if keep == 0 {
            return;
        }
        match segs {
            [name] => self.set_memory(name, size),
            [name, rest @ ..] => self.dir_mut(name).add(rest, size, keep - 1),
            [] => {}
        }
    }

    /// Removes the memory at `segs` below this node, uncounting it and dropping names nothing is
    /// left under; returns its size.
    pub(crate) fn remove(&mut self, segs: &[&str]) -> Option<u64> {
        let (name, rest) = segs.split_first()?;
        let size = match (rest.is_empty(), self.find_dir(name)) {
            (true, Ok(at)) => self.dirs[at].memory.take()?,
            (true, Err(_)) => {
                let at = self.files.find(name).ok()?;
                self.files.remove_at(at)
            }
            (false, Ok(at)) => {
                let size = self.dirs[at].remove(rest)?;
                if self.dirs[at].all_count == 0 {
                    let gone = self.dirs.remove(at);
                    if let Some(memory) = gone.memory {
                        let at = self.files.find(name).expect_err("a name is a file or a directory, never both");
                        self.files.insert_at(at, name, memory);
                    }
                }
                size
            }
            (false, Err(_)) => return None,
        };
        self.all_count -= 1;
        self.all_bytes -= size;
        if segs.iter().all(|s| !hidden(s)) {
            self.vis_count -= 1;
            self.vis_bytes -= size;
        }
        Some(size)
    }

    /// Removes the memories `names` (sorted in UTF-16 order, no repeats) of the directory at
    /// `dir` below this node, walking there once and through its file table once: what a commit
    /// deleting a subtree does to each of its directories. Returns what it removed, visibility
    /// relative to this node.
    pub(crate) fn remove_many(&mut self, dir: &[&str], names: &mut Vec<&str>) -> Removed {
        let mut removed = Removed::default();
        match dir.split_first() {
            None => {
                self.files.remove_sorted(names, &mut removed);
                // The rest name directories (a memory with others below it) or nothing.
                for name in names.iter() {
                    if let Ok(at) = self.find_dir(name)
                        && let Some(size) = self.dirs[at].memory.take()
                    {
                        removed.add(size, !hidden(name));
                    }
                }
            }
            Some((name, rest)) => {
                let Ok(at) = self.find_dir(name) else {
                    return removed;
                };
                removed = self.dirs[at].remove_many(rest, names);
                if self.dirs[at].all_count == 0 {
                    let gone = self.dirs.remove(at);
                    if let Some(memory) = gone.memory {
                        let at = self.files.find(name).expect_err("a name is a file or a directory, never both");
                        self.files.insert_at(at, name, memory);
                    }
                }
                if hidden(name) {
                    removed.vis_count = 0;
                    removed.vis_bytes = 0;
                }
            }
        }
        self.all_count -= removed.all_count;
        self.all_bytes -= removed.all_bytes;
        self.vis_count -= removed.vis_count;
        self.vis_bytes -= removed.vis_bytes;
        removed
    }

    /// The directory node at `segs` below this one.
    pub(crate) fn find(&self, segs: &[&str], visited: &mut u64) -> Option<&Dir> {
        let mut node = self;
        for seg in segs {
            *visited += 1;
            node = &node.dirs[node.find_dir(seg).ok()?];
        }
        Some(node)
    }

    /// Frees the slack of every table, after a bulk build.
    pub(crate) fn shrink(&mut self) {
        self.files.shrink();
        self.dirs.shrink_to_fit();
        for dir in &mut self.dirs {
            dir.shrink();
        }
    }

    /// Both tables merged, in UTF-16 name order.
    pub(crate) fn children(&self) -> Children<'_> {
        Children { files: &self.files, file: 0, dirs: &self.dirs, dir: 0 }
    }

    /// Names directly under this node.
    pub(crate) fn len(&self) -> usize {
        self.files.len() + self.dirs.len()
    }

    /// Whether a listing of this directory may print more than `max` lines (each name at depth 1
    /// and 2 prints at most two: its memory and its directory), looking at no more names than it
    /// needs to.
    pub(crate) fn listing_lines_exceed(&self, max: u64) -> bool {
        let mut lines = 2 * self.files.len() as u64;
        if lines > max {
            return true;
        }
        for child in &self.dirs {
            lines += 2 + 2 * child.len() as u64;
            if lines > max {
                return true;
            }
        }
        false
    }
}

/// A directory's two tables walked as one, in UTF-16 name order (the names are disjoint).
pub(crate) struct Children<'a> {
    files: &'a Files,
    file: usize,
    dirs: &'a [Dir],
    dir: usize,
}

impl<'a> Iterator for Children<'a> {
    type Item = Child<'a>;

    #[inline]
    fn next(&mut self) -> Option<Child<'a>> {
        let file = self.files.items.get(self.file).map(|it| (self.files.name(it), it.size));
        let dir = self.dirs.get(self.dir);
        match (file, dir) {
            (Some((name, _)), Some(dir)) if utf16_cmp(name, &dir.name) == Ordering::Greater => {
                self.dir += 1;
                Some(Child::Dir(dir))
            }
            (Some((name, size)), _) => {
                self.file += 1;
                Some(Child::File(name, size))
            }
            (None, Some(dir)) => {
                self.dir += 1;
                Some(Child::Dir(dir))
            }
            (None, None) => None,
        }
    }
}

/// The depth-1 and depth-2 entries of a directory view, depth first, in UTF-16 name order.
/// Adds the nodes it looks at to `visited`, so tests can bound the work.
pub(crate) fn emit(dir: &Dir, visited: &mut u64) -> Vec<DirEntry> {
    // At least one line per file and two per directory: a 5,000-entry listing grows its vector
    // once, not a dozen times with a copy each.
    let mut out = Vec::with_capacity(dir.files.len() + 2 * dir.dirs.len());
    for child in dir.children() {
        *visited += 1;
        let child = match child {
            Child::File(name, size) => {
                if !hidden(name) {
                    out.push(DirEntry { rel: name.into(), size, is_dir: false });
                }
                continue;
            }
            Child::Dir(child) => child,
        };
        let name = &*child.name;
        if hidden(name) {
            continue;
        }
        if let Some(size) = child.memory {
            out.push(DirEntry { rel: name.into(), size, is_dir: false });
        }
        if child.vis_count == 0 {
            continue;
        }
        out.push(DirEntry { rel: name.into(), size: child.vis_bytes, is_dir: true });
        for grandchild in child.children() {
            *visited += 1;
            match grandchild {
                Child::File(name2, size) => {
                    if !hidden(name2) {
                        out.push(DirEntry { rel: compact_str::format_compact!("{name}/{name2}"), size, is_dir: false });
                    }
                }
                Child::Dir(grandchild) => {
                    let name2 = &*grandchild.name;
                    if hidden(name2) {
                        continue;
                    }
                    let rel = compact_str::format_compact!("{name}/{name2}");
                    if let Some(size) = grandchild.memory {
                        out.push(DirEntry { rel: rel.clone(), size, is_dir: false });
                    }
                    if grandchild.vis_count > 0 {
                        out.push(DirEntry { rel, size: grandchild.vis_bytes, is_dir: true });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn utf16_order_differs_from_utf8() {
        assert_eq!(utf16_cmp("\u{1F600}", "\u{FF5E}"), Ordering::Less);
        assert!("\u{1F600}".as_bytes() > "\u{FF5E}".as_bytes());
        assert_eq!(utf16_cmp("a", "a.md"), Ordering::Less);
        assert_eq!(utf16_cmp("B", "a"), Ordering::Less);
        assert_eq!(utf16_cmp("x\u{E000}", "x\u{10000}"), Ordering::Greater);
        assert_eq!(utf16_cmp("\u{D7FF}", "\u{10000}"), Ordering::Less);
    }

    /// Characters from the ranges where the two orders meet or differ.
    fn name() -> impl Strategy<Value = String> {
        let ch = prop_oneof![
            prop::char::range('a', 'c'),
            prop::char::range('\u{D7FE}', '\u{D7FF}'),
            prop::char::range('\u{E000}', '\u{E001}'),
            prop::char::range('\u{FFFE}', '\u{FFFF}'),
            prop::char::range('\u{10000}', '\u{10001}'),
            prop::char::range('\u{10FFFF}', '\u{10FFFF}'),
        ];
        prop::collection::vec(ch, 0..12).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #[test]
        fn utf16_cmp_is_javascript_order(a in name(), b in name()) {
            prop_assert_eq!(utf16_cmp(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }
    }
}
