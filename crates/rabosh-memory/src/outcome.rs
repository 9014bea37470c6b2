//! What each command did. The facade turns these into the contract's strings.

/// One line of a directory listing, in listing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Path relative to the viewed directory, without a trailing `/` (e.g. `a.md`, `sub`, `sub/b.md`).
    pub rel: compact_str::CompactString,
    /// A memory's size, or the sum of a directory's visible descendants.
    pub size: u64,
    pub is_dir: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// Nothing (visible) at or under the path, and it is not the root.
    NotFound,
    /// A memory whose stored line count exceeds [`crate::MAX_VIEW_LINES`].
    TooManyLines,
    File {
        content: String,
    },
    /// `total`: bytes of every visible memory under the path; `entries`: depth 1 and 2, in order.
    Dir {
        total: u64,
        entries: Vec<DirEntry>,
    },
    /// Only in a view of the past ([`crate::Memories::view_past`]): history did not record the
    /// state at this path then (see docs/guide/history.md, "What `at()` shows").
    NotRecorded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Create {
    Created,
    /// A memory exists at the path (or the path is the root) and overwriting is off.
    Exists,
    TooLarge {
        limit: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrReplace {
    /// The root, or no memory at the path.
    NotFound,
    /// Empty `old_str`, or not found.
    NoMatch,
    /// 1-based line of each occurrence's start, counted with overlaps.
    Multiple {
        lines: Vec<u64>,
    },
    TooLarge {
        limit: u64,
    },
    /// `first_line`: number of `snippet[0]`; the snippet is changed line −2 … +2 of the new content.
    Edited {
        first_line: u64,
        snippet: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insert {
    NotFound,
    /// `insert_line` out of `[0, count]`, or not an integer.
    InvalidLine {
        count: u64,
    },
    TooLarge {
        limit: u64,
    },
    Edited,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delete {
    IsRoot,
    NotFound,
    Deleted { count: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rename {
    /// `old_path` is the root.
    IsRoot,
    /// `new_path` is inside `old_path`.
    Inside,
    /// Nothing at or under `old_path`.
    NotFound,
    /// `new_path` is the root, equals `old_path`, or has a memory at or under it.
    DestinationExists,
    Renamed {
        count: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub memories: u64,
    pub bytes: u64,
}
