//! napi-rs binding: thin, async on the libuv pool (commands that commit: a store's write queue),
//! typed errors.
//!
//! Every class here is `Native*`: the TypeScript facade wraps them and owns the public names.
//! The reports it hands to callers unchanged (`reports.rs`) and the shared limits (`limits.rs`)
//! are generated under their public names instead, so they are defined once.
//! Anything that may touch the disk runs as an `AsyncTask` on the libuv pool; a fault crosses as a
//! JS `Error` with a stable `code` (see `fault.rs`); a panic becomes such an error, never an abort.

mod backends;
mod browse;
mod bulk;
mod changes;
mod completion;
mod fault;
mod fault_codes;
mod history;
mod history_options;
mod history_outcome;
mod js_number;
mod limits;
mod memories;
mod outcome;
mod page;
mod render;
mod reports;
mod store;
mod sync_base;
mod work;
mod write_queue;

use napi_derive::napi;

/// The version of the native addon.
#[napi]
#[must_use]
pub fn native_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
