//! The files of a store and their byte layouts: frames, segments, hints, MANIFEST, SYNCED.

pub(crate) mod format;
pub(crate) mod hint;
pub(crate) mod hint_pack;
pub(crate) mod hint_pages;
pub(crate) mod hint_rec;
pub(crate) mod hint_writer;
pub(crate) mod manifest;
pub(crate) mod metabuf;
pub(crate) mod record;
pub(crate) mod segment;
pub(crate) mod synced;
