//! Every limit and default the facade shares with the Rust crates, exported as JS constants so
//! that each is defined once (in rabosh-memory or the engine) and the facade, its errors and the
//! app's help texts read the same number. Read by JS only (the `#[napi]` exports); the crate's
//! unit tests build without that registration.
#![cfg_attr(test, allow(dead_code))]

use napi_derive::napi;

/// The longest actor type in UTF-8 bytes: the facade checks the handler option against it.
#[napi]
pub const MAX_ACTOR_TYPE_BYTES: u32 = rabosh_memory::MAX_ACTOR_TYPE_BYTES as u32;
/// The longest actor id in UTF-8 bytes.
#[napi]
pub const MAX_ACTOR_ID_BYTES: u32 = rabosh_memory::MAX_ACTOR_ID_BYTES as u32;

/// The handler option `maxMemoryBytes` unless set.
#[napi]
pub const DEFAULT_MAX_MEMORY_BYTES: u32 = rabosh_memory::DEFAULT_MAX_MEMORY_BYTES as u32;

/// The longest path in UTF-8 bytes (contract §2 step 6).
#[napi]
pub const MAX_PATH_BYTES: u32 = rabosh_memory::MAX_PATH_BYTES as u32;

/// The longest file a view renders, in lines.
#[napi]
pub const MAX_VIEW_LINES: u32 = rabosh_memory::MAX_VIEW_LINES as u32;

/// The store option `lockTimeout` unless set, in milliseconds.
#[napi]
pub const DEFAULT_LOCK_TIMEOUT_MS: u32 = rabosh_memory::DEFAULT_LOCK_TIMEOUT.as_millis() as u32;

/// The versions a page of `versions()` holds unless its `limit` says.
#[napi]
pub const DEFAULT_VERSION_PAGE: u32 = rabosh_memory::DEFAULT_VERSION_PAGE as u32;
/// The largest `limit` a page of `versions()` may ask for.
#[napi]
pub const MAX_VERSION_PAGE: u32 = rabosh_memory::MAX_VERSION_PAGE as u32;
