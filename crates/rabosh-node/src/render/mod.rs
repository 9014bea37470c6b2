//! The only wording made in Rust: the two answers rendered where the store reads them, for their
//! measured JS-thread cost (docs/architecture.md, "Where each kind of string lives"). Every other
//! answer is worded by the facade (src/strings.ts).
//!
//! - `file_view`: the file view, `view_range` and `viewMaxChars` applied and the lines numbered
//!   in one pass (`str_replace`'s short snippet is numbered the same way by the facade);
//! - `listing`: the directory view, whose size grows with the store;
//! - `text`: how a rendered answer crosses to JS (Latin-1 when it is all ASCII).

mod file_view;
mod listing;
mod text;

pub use file_view::{Range, render as file_view};
pub use listing::render as listing;
pub use text::Text;
