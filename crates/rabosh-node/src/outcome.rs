//! What a command did, as a plain object `{ kind, ...fields }`. The facade turns it into text;
//! nothing here decides wording.

use napi_derive::napi;
use rabosh_memory::{Create, Delete, DirEntry, Insert, Rename, StrReplace, Usage, View};

/// One listing line: path relative to the viewed directory (no trailing `/`).
#[napi(object)]
pub struct NativeDirEntry {
    pub rel: String,
    pub size: f64,
    pub is_dir: bool,
}

/// A command's outcome. `kind` is one of:
/// view: `not_found` | `too_many_lines` | `file` {content, lines} | `dir` {total, entries};
/// create: `created` | `exists` | `too_large` {limit};
/// strReplace: `not_found` | `no_match` | `multiple` {occurrences} | `too_large` {limit} |
///   `edited` {firstLine, snippet};
/// insert: `not_found` | `invalid_line` {count} | `too_large` {limit} | `edited`;
/// delete: `is_root` | `not_found` | `deleted` {count};
/// rename: `is_root` | `inside` | `not_found` | `destination_exists` | `renamed` {count}.
#[napi(object)]
#[derive(Default)]
pub struct NativeOutcome {
    pub kind: String,
    pub content: Option<String>,
    pub lines: Option<f64>,
    pub total: Option<f64>,
    pub entries: Option<Vec<NativeDirEntry>>,
    pub limit: Option<f64>,
    pub count: Option<f64>,
    pub occurrences: Option<Vec<f64>>,
    pub first_line: Option<f64>,
    pub snippet: Option<Vec<String>>,
}

fn kind(k: &str) -> NativeOutcome {
    NativeOutcome { kind: k.into(), ..NativeOutcome::default() }
}

// Counts and sizes cross as JS numbers; exact up to 2^53, far beyond any store this serves.
fn num(n: u64) -> f64 {
    n as f64
}

fn too_large(limit: u64) -> NativeOutcome {
    NativeOutcome { limit: Some(num(limit)), ..kind("too_large") }
}

impl From<DirEntry> for NativeDirEntry {
    fn from(e: DirEntry) -> Self {
        NativeDirEntry { rel: e.rel, size: num(e.size), is_dir: e.is_dir }
    }
}

impl From<View> for NativeOutcome {
    fn from(v: View) -> Self {
        match v {
            View::NotFound => kind("not_found"),
            View::TooManyLines => kind("too_many_lines"),
            View::File { content, lines } => {
                NativeOutcome { content: Some(content), lines: Some(num(lines)), ..kind("file") }
            }
            View::Dir { total, entries } => NativeOutcome {
                total: Some(num(total)),
                entries: Some(entries.into_iter().map(Into::into).collect()),
                ..kind("dir")
            },
        }
    }
}

impl From<Create> for NativeOutcome {
    fn from(c: Create) -> Self {
        match c {
            Create::Created => kind("created"),
            Create::Exists => kind("exists"),
            Create::TooLarge { limit } => too_large(limit),
        }
    }
}

impl From<StrReplace> for NativeOutcome {
    fn from(s: StrReplace) -> Self {
        match s {
            StrReplace::NotFound => kind("not_found"),
            StrReplace::NoMatch => kind("no_match"),
            StrReplace::Multiple { lines } => {
                NativeOutcome { occurrences: Some(lines.into_iter().map(num).collect()), ..kind("multiple") }
            }
            StrReplace::TooLarge { limit } => too_large(limit),
            StrReplace::Edited { first_line, snippet } => {
                NativeOutcome { first_line: Some(num(first_line)), snippet: Some(snippet), ..kind("edited") }
            }
        }
    }
}

impl From<Insert> for NativeOutcome {
    fn from(i: Insert) -> Self {
        match i {
            Insert::NotFound => kind("not_found"),
            Insert::InvalidLine { count } => NativeOutcome { count: Some(num(count)), ..kind("invalid_line") },
            Insert::TooLarge { limit } => too_large(limit),
            Insert::Edited => kind("edited"),
        }
    }
}

impl From<Delete> for NativeOutcome {
    fn from(d: Delete) -> Self {
        match d {
            Delete::IsRoot => kind("is_root"),
            Delete::NotFound => kind("not_found"),
            Delete::Deleted { count } => NativeOutcome { count: Some(num(count)), ..kind("deleted") },
        }
    }
}

impl From<Rename> for NativeOutcome {
    fn from(r: Rename) -> Self {
        match r {
            Rename::IsRoot => kind("is_root"),
            Rename::Inside => kind("inside"),
            Rename::NotFound => kind("not_found"),
            Rename::DestinationExists => kind("destination_exists"),
            Rename::Renamed { count } => NativeOutcome { count: Some(num(count)), ..kind("renamed") },
        }
    }
}

/// How many memories a scope holds and their total content bytes.
#[napi(object)]
pub struct NativeUsage {
    pub memories: f64,
    pub bytes: f64,
}

impl From<Usage> for NativeUsage {
    fn from(u: Usage) -> Self {
        NativeUsage { memories: num(u.memories), bytes: num(u.bytes) }
    }
}
