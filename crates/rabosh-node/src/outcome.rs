//! What a command did, one discriminated union per command (`{ type: 'Variant', …fields }` in
//! `binding.d.cts`), each variant named as in `rabosh_memory`. The facade turns them into text;
//! nothing here decides wording.

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use rabosh_memory::{Create, Delete, Insert, Rename, StrReplace, View};

use crate::render::{self, Range, Text};

// Counts and sizes cross as JS numbers; exact up to 2^53, far beyond any store this serves.
fn num(n: u64) -> f64 {
    n as f64
}

/// `view`. A file view and a listing cross as their finished text (rendered where they are
/// read, see render/): one string, not one piece per line, Latin-1 when it is ASCII
/// (render/text.rs). Only ever sent to JS, never read back.
#[napi(object_from_js = false)]
pub enum NativeView {
    NotFound,
    TooManyLines,
    /// The file view's whole answer, byte-exact (contract §4): header, numbered lines of the
    /// range that fit `viewMaxChars`, and the truncation note when lines were left out.
    File {
        #[napi(ts_type = "string")]
        text: Text,
    },
    /// The directory view's whole answer, byte-exact (contract §4).
    Dir {
        #[napi(ts_type = "string")]
        text: Text,
    },
    /// Only from a view of the past: history did not record the state there then.
    NotRecorded,
}

impl NativeView {
    /// `view` of `path` answered: a file view cut to `range` and `max_chars` (UTF-16 code units)
    /// and rendered, a listing rendered.
    pub fn new(path: &str, v: View, range: Range, max_chars: usize) -> NativeView {
        match v {
            View::NotFound => NativeView::NotFound,
            View::TooManyLines => NativeView::TooManyLines,
            View::File { content, .. } => {
                NativeView::File { text: render::file_view(path, &content, range, max_chars) }
            }
            View::Dir { total, entries } => NativeView::Dir { text: render::listing(path, total, &entries).into() },
            View::NotRecorded => NativeView::NotRecorded,
        }
    }

    /// The same answer for a view on the JS thread: a file view's or listing's text as a bare
    /// string, no outcome object around it (creating and filling one was ~4 k of a 4 KiB view's
    /// instructions, docs/investigations/view-instructions.md); any other outcome as the object.
    pub fn bare(path: &str, v: View, range: Range, max_chars: usize) -> Either<Text, NativeView> {
        match NativeView::new(path, v, range, max_chars) {
            NativeView::File { text } | NativeView::Dir { text } => Either::A(text),
            other => Either::B(other),
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
/// lines around the edit, the first of them line `firstLine` (the facade numbers and words them).
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
