//! What a command did, one discriminated union per command (`{ type: 'Variant', …fields }` in
//! `binding.d.cts`), each variant named as in `rabosh_memory`. The facade turns them into text;
//! nothing here decides wording.

use napi_derive::napi;
use rabosh_memory::{Create, Delete, Insert, Rename, StrReplace, Usage, View};

use crate::listing_text;
use crate::window::{Range, select};

// Counts and sizes cross as JS numbers; exact up to 2^53, far beyond any store this serves.
fn num(n: u64) -> f64 {
    n as f64
}

/// `view`. A file crosses as only the lines it shows; a listing as its finished text (rendered on
/// the pool, see listing_text.rs), not one object per line.
#[napi]
pub enum NativeView {
    NotFound,
    TooManyLines,
    /// Lines `first + 1` … `first + shown` of `lines`, joined by `\n` in `text`; `truncated`
    /// when `viewMaxChars` left lines of the selected range out.
    File {
        first: f64,
        shown: f64,
        lines: f64,
        truncated: bool,
        text: String,
    },
    /// The directory view's whole answer, byte-exact (contract §4).
    Dir {
        text: String,
    },
}

impl NativeView {
    /// `view` of `path` answered: a file cut to `range` and `max_chars` (UTF-16 code units)
    /// before it crosses, a listing rendered.
    pub fn new(path: &str, v: View, range: Range, max_chars: usize) -> NativeView {
        match v {
            View::NotFound => NativeView::NotFound,
            View::TooManyLines => NativeView::TooManyLines,
            View::File { content, .. } => {
                let w = select(&content, range, max_chars);
                NativeView::File {
                    first: w.first as f64,
                    shown: w.shown as f64,
                    lines: w.lines as f64,
                    truncated: w.truncated,
                    text: w.text.to_string(),
                }
            }
            View::Dir { total, entries } => NativeView::Dir { text: listing_text::render(path, total, &entries) },
        }
    }
}

/// `create`.
#[napi]
pub enum NativeCreate {
    Created,
    Exists,
    TooLarge { limit: f64 },
}

impl From<Create> for NativeCreate {
    fn from(c: Create) -> Self {
        match c {
            Create::Created => NativeCreate::Created,
            Create::Exists => NativeCreate::Exists,
            Create::TooLarge { limit } => NativeCreate::TooLarge { limit: num(limit) },
        }
    }
}

/// `str_replace`. `lines`: the line of every occurrence, counted with overlaps; `snippet`: the
/// edited lines of the new content, the first numbered `firstLine`.
#[napi]
pub enum NativeStrReplace {
    NotFound,
    NoMatch,
    Multiple { lines: Vec<f64> },
    TooLarge { limit: f64 },
    Edited { first_line: f64, snippet: Vec<String> },
}

impl From<StrReplace> for NativeStrReplace {
    fn from(s: StrReplace) -> Self {
        match s {
            StrReplace::NotFound => NativeStrReplace::NotFound,
            StrReplace::NoMatch => NativeStrReplace::NoMatch,
            StrReplace::Multiple { lines } => {
                NativeStrReplace::Multiple { lines: lines.into_iter().map(num).collect() }
            }
            StrReplace::TooLarge { limit } => NativeStrReplace::TooLarge { limit: num(limit) },
            StrReplace::Edited { first_line, snippet } => {
                NativeStrReplace::Edited { first_line: num(first_line), snippet }
            }
        }
    }
}

/// `insert`. `count`: the lines an `insert_line` may range over.
#[napi]
pub enum NativeInsert {
    NotFound,
    InvalidLine { count: f64 },
    TooLarge { limit: f64 },
    Edited,
}

impl From<Insert> for NativeInsert {
    fn from(i: Insert) -> Self {
        match i {
            Insert::NotFound => NativeInsert::NotFound,
            Insert::InvalidLine { count } => NativeInsert::InvalidLine { count: num(count) },
            Insert::TooLarge { limit } => NativeInsert::TooLarge { limit: num(limit) },
            Insert::Edited => NativeInsert::Edited,
        }
    }
}

/// `delete`. `count`: memories deleted.
#[napi]
pub enum NativeDelete {
    IsRoot,
    NotFound,
    Deleted { count: f64 },
}

impl From<Delete> for NativeDelete {
    fn from(d: Delete) -> Self {
        match d {
            Delete::IsRoot => NativeDelete::IsRoot,
            Delete::NotFound => NativeDelete::NotFound,
            Delete::Deleted { count } => NativeDelete::Deleted { count: num(count) },
        }
    }
}

/// `rename`. `count`: memories moved.
#[napi]
pub enum NativeRename {
    IsRoot,
    Inside,
    NotFound,
    DestinationExists,
    Renamed { count: f64 },
}

impl From<Rename> for NativeRename {
    fn from(r: Rename) -> Self {
        match r {
            Rename::IsRoot => NativeRename::IsRoot,
            Rename::Inside => NativeRename::Inside,
            Rename::NotFound => NativeRename::NotFound,
            Rename::DestinationExists => NativeRename::DestinationExists,
            Rename::Renamed { count } => NativeRename::Renamed { count: num(count) },
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
