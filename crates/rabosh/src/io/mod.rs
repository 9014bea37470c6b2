//! How bytes reach the disk: the filesystem seam, OS calls, the directory lock.

pub(crate) mod bytes;
pub(crate) mod lock;
pub(crate) mod os;
pub(crate) mod replace;
pub(crate) mod vfs;
