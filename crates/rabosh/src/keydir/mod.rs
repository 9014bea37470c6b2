//! The in-memory key directory, and the hints it is built from lazily.

pub(crate) mod map;
pub(crate) mod merge;
pub(crate) mod page_cache;
pub(crate) mod paged_run;
pub(crate) mod runs;
pub(crate) mod union;
pub(crate) mod walk;
