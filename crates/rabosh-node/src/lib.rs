//! napi-rs binding: thin, async on the libuv pool, typed errors.
use napi_derive::napi;

/// The version of the native addon.
#[napi]
pub fn native_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
