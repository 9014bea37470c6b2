use std::fmt;
use std::io;
use std::path::PathBuf;

/// Who holds a store's lock, as recorded in `LOCK.holder` by the process that took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    /// Process id of the holder, when the holder record could be read.
    pub pid: Option<u32>,
    /// Host name of the holder.
    pub host: Option<String>,
    /// Holder process start time, milliseconds since the Unix epoch.
    pub started_at_ms: Option<u64>,
    /// True when a process with that pid AND that start time runs on this host now.
    pub is_running: bool,
    /// True when the holder is this very process (the store is already open here).
    pub this_process: bool,
}

/// Everything that can go wrong in the engine. Expected absences (a missing key) are not errors.
#[derive(Debug)]
pub enum Error {
    /// An operating-system IO call failed.
    Io { op: &'static str, path: PathBuf, source: io::Error },
    /// Data on disk would lose or misreport an acknowledged commit.
    Corruption { file: PathBuf, offset: u64, reason: String },
    /// A file was written by a newer format version than this build reads.
    Unsupported { file: PathBuf, version: u32 },
    /// Another open handle (another process, or this one) holds the store.
    Locked { dir: PathBuf, holder: LockHolder },
    /// Shared mode: the cross-process commit lock stayed held by another process (or another
    /// program holding `WRITER`) for longer than `Options::lock_timeout` — a stopped or stuck
    /// holder. Nothing was done; the call may be retried.
    Busy { dir: PathBuf, holder: LockHolder, waited_ms: u64 },
    /// A write or fsync failed earlier; writes are refused until the store is reopened.
    Poisoned { reason: String },
    /// The store was closed.
    Closed,
    /// The caller asked for something the engine cannot do (e.g. a non-empty checkpoint target).
    InvalidArgument(String),
    /// `create_if_missing` is off and the directory is absent or holds no store (no MANIFEST:
    /// empty, or left by a killed checkpoint). Nothing was created.
    NotAStore { dir: PathBuf },
    /// The encryption key given does not open this store's data key. Nothing was written.
    WrongKey { dir: PathBuf },
    /// The store is encrypted and no key was given. Nothing was written.
    KeyRequired { dir: PathBuf },
    /// A key was given for a store that is not encrypted (refused rather than ignored).
    NotEncrypted { dir: PathBuf },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A stable machine-readable code for each kind, used by the bindings.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } => "RABOSH_IO",
            Error::Corruption { .. } => "RABOSH_CORRUPTION",
            Error::Unsupported { .. } => "RABOSH_UNSUPPORTED_FORMAT",
            Error::Locked { .. } => "RABOSH_STORE_LOCKED",
            Error::Busy { .. } => "RABOSH_STORE_BUSY",
            Error::Poisoned { .. } => "RABOSH_POISONED",
            Error::Closed => "RABOSH_CLOSED",
            Error::InvalidArgument(_) => "RABOSH_INVALID_ARGUMENT",
            Error::NotAStore { .. } => "RABOSH_NOT_A_STORE",
            Error::WrongKey { .. } => "RABOSH_WRONG_KEY",
            Error::KeyRequired { .. } => "RABOSH_KEY_REQUIRED",
            Error::NotEncrypted { .. } => "RABOSH_NOT_ENCRYPTED",
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io { op, path: path.into(), source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, source } => write!(f, "{op} failed on {}: {source}", path.display()),
            Error::Corruption { file, offset, reason } => {
                write!(f, "store corrupted in {} at offset {offset}: {reason}", file.display())
            }
            Error::Unsupported { file, version } => write!(
                f,
                "{} uses store format version {version}, newer than this build supports; upgrade rabosh",
                file.display()
            ),
            Error::Locked { dir, holder } => {
                write!(f, "store {} is locked by ", dir.display())?;
                write_holder(f, holder)?;
                if holder.this_process {
                    write!(f, " (already open in this process)")
                } else if holder.is_running {
                    write!(f, " (still running)")
                } else {
                    write!(f, " (not known to be running)")
                }
            }
            Error::Busy { dir, holder, waited_ms } => {
                write!(f, "store {} is busy: its commit lock is held by ", dir.display())?;
                write_holder(f, holder)?;
                match waited_ms {
                    0 => write!(f, "; this call does not wait for it (retry, or use an awaited call)"),
                    ms => write!(f, "; gave up after {ms} ms (lockTimeout)"),
                }
            }
            Error::Poisoned { reason } => {
                write!(f, "store refuses writes after an earlier IO failure ({reason}); close and reopen it")
            }
            Error::Closed => write!(f, "store is closed"),
            Error::InvalidArgument(msg) => write!(f, "{msg}"),
            Error::NotAStore { dir } => write!(f, "{} is not a rabosh store (no MANIFEST)", dir.display()),
            Error::WrongKey { dir } => {
                write!(f, "the encryption key does not open the store at {}; nothing was written", dir.display())
            }
            Error::KeyRequired { dir } => {
                write!(f, "the store at {} is encrypted; open it with its encryption key", dir.display())
            }
            Error::NotEncrypted { dir } => write!(
                f,
                "the store at {} is not encrypted, but an encryption key was given; open it without a key, or encrypt it first (reencrypt)",
                dir.display()
            ),
        }
    }
}

fn write_holder(f: &mut fmt::Formatter<'_>, holder: &LockHolder) -> fmt::Result {
    match (holder.pid, &holder.host) {
        (Some(pid), Some(host)) => write!(f, "pid {pid} on {host}"),
        (Some(pid), None) => write!(f, "pid {pid}"),
        _ => write!(f, "an unknown process"),
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
