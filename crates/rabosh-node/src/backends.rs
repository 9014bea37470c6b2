//! The backends of crates of their own this binding opens by URL: `rabosh_memory::open_with`
//! asks each in turn whether a target is its own, and a target none claims is a directory (the
//! embedded engine). Adding a backend is its crate and one line here.

use rabosh_memory::UrlOpener;

pub const URL_BACKENDS: &[&dyn UrlOpener] = &[&rabosh_memory_postgres::PostgresOpener];
