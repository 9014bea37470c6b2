//! The store: open and recovery, the write path, snapshots, shared mode, maintenance.

pub(crate) mod batch;
pub(crate) mod busy;
pub(crate) mod catch_up;
pub(crate) mod checkpoint;
pub(crate) mod compact;
pub(crate) mod handle;
pub(crate) mod hint_source;
pub(crate) mod keys;
pub(crate) mod options;
pub(crate) mod recovery;
pub(crate) mod reencrypt;
pub(crate) mod shared;
pub(crate) mod snapshot;
pub(crate) mod writer;
