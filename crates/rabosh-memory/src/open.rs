//! [`open`]: from a target (a directory, or a URL some backend crate claims) and the store
//! options to an open [`Store`]. The backend is decided here, once: a [`UrlOpener`] the caller
//! passes that claims the target opens it, a directory opens the embedded engine. Every option
//! is checked against what the backend can do before anything is opened. This crate knows no URL
//! scheme: a backend crate brings its own opener (the binding lists them, `rabosh-node`'s
//! `backends.rs`), and its URL's parameters are its own business.

use crate::embedded::{Durability, EmbeddedOptions, EmbeddedStore};
use crate::store::{Capabilities, Store};
use crate::{EncryptionKey, Error, Result};

/// How to open a store, whatever its backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// When a commit is durable; `Buffered` only where the backend has it.
    pub durability: Durability,
    /// Create the store when the target holds none (false: refuse with `NotAStore`, touching
    /// nothing).
    pub create: bool,
    /// Hold the store alone (refusing every other opener); only where the backend can.
    pub exclusive: bool,
    /// The longest wait for another process's commit lock (None: the engine's default); only
    /// where the backend has such a lock (a PostgreSQL URL bounds its waits with its own
    /// `client_timeout`).
    pub lock_timeout: Option<std::time::Duration>,
    /// Encrypt at rest with this host key (None: a plain store). A directory hands it to the
    /// engine; a PostgreSQL URL seals each row's value and metadata client-side. An encrypted
    /// store opened without it is `KeyRequired`, with another key `WrongKey`, a plain store
    /// opened with one `NotEncrypted`.
    pub encryption: Option<crate::EncryptionKey>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            durability: Durability::Sync,
            create: true,
            exclusive: false,
            lock_timeout: None,
            encryption: None,
        }
    }
}

/// How a backend of a crate of its own is opened: the binding hands [`open_with`] a list of these.
pub trait UrlOpener: Sync {
    /// Whether `target` is this backend's (`postgres://…`, say); a target no opener claims is a
    /// directory.
    fn claims(&self, target: &str) -> bool;
    /// What stores of this backend can do; [`open_with`] refuses what the options ask and these
    /// lack before calling [`UrlOpener::open`].
    fn capabilities(&self) -> &Capabilities;
    /// Opens (creating when `options.create`) the store at `target`, on the calling thread.
    fn open(&self, target: &str, options: StoreOptions) -> Result<Store>;
    /// [`reencrypt`] of a store of this backend: usually refused, as [`Error::Unsupported`].
    fn reencrypt(&self, target: &str, from: Option<&EncryptionKey>, to: Option<&EncryptionKey>) -> Result<()>;
}

/// A URL no opener claims is refused rather than taken for a directory named `scheme:` (a
/// database URL handed to a build without its backend must not create a store on disk). Only
/// the scheme is named: the rest may hold a password.
fn refuse_unclaimed_url(target: &str) -> Result<()> {
    let Some((scheme, _)) = target.split_once("://") else { return Ok(()) };
    // Two characters at least: `C://x` is a Windows drive, not a URL.
    let mut chars = scheme.chars();
    let is_scheme = scheme.len() >= 2
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    if !is_scheme {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!("no backend of this build opens {scheme}:// URLs")))
}

/// Refuses what `options` ask and `capabilities` lack, naming the option.
fn check(capabilities: &Capabilities, options: &StoreOptions) -> Result<()> {
    if options.durability == Durability::Buffered && !capabilities.buffered {
        return Err(capabilities.refuse_option("durability", "durability 'buffered'"));
    }
    if options.exclusive && !capabilities.exclusive {
        return Err(capabilities.refuse_option("exclusive", "exclusive: true"));
    }
    if options.lock_timeout.is_some() && !capabilities.exclusive {
        // The stores that can be held alone are the ones with a cross-process commit lock.
        return Err(capabilities.refuse_option("lockTimeout", "lockTimeout"));
    }
    Ok(())
}

/// Opens the directory `target` with the embedded engine, on the calling thread (which may wait
/// on a lock file). [`open_with`] opens the URLs of backend crates too.
pub fn open(target: &str, options: StoreOptions) -> Result<Store> {
    open_with(target, options, &[])
}

/// Opens the store at `target` on the calling thread (which may wait: on a lock file, on a
/// connection): with the first of `openers` that claims it, else as a directory.
pub fn open_with(target: &str, options: StoreOptions, openers: &[&dyn UrlOpener]) -> Result<Store> {
    if let Some(opener) = openers.iter().find(|o| o.claims(target)) {
        check(opener.capabilities(), &options)?;
        return opener.open(target, options);
    }
    refuse_unclaimed_url(target)?;
    check(&Capabilities::EMBEDDED, &options)?;
    let store = EmbeddedStore::open(
        target,
        EmbeddedOptions {
            durability: options.durability,
            create_if_missing: options.create,
            shared: !options.exclusive,
            lock_timeout: options.lock_timeout.unwrap_or(rabosh::DEFAULT_LOCK_TIMEOUT),
            encryption: options.encryption,
            ..Default::default()
        },
    )?;
    Ok(Store::embedded(store))
}

/// Rewrites the closed store in directory `dir` from `from` to `to` (None: plain) — encrypt,
/// decrypt or a fresh data key — crash-safely: after a kill at any point it opens with `from`
/// or with `to`, never neither. [`reencrypt_with`] answers the URLs of backend crates too.
pub fn reencrypt(dir: &str, from: Option<&EncryptionKey>, to: Option<&EncryptionKey>) -> Result<()> {
    reencrypt_with(dir, from, to, &[])
}

/// [`reencrypt`], where a target one of `openers` claims is that backend's to answer.
pub fn reencrypt_with(
    target: &str,
    from: Option<&EncryptionKey>,
    to: Option<&EncryptionKey>,
    openers: &[&dyn UrlOpener],
) -> Result<()> {
    if let Some(opener) = openers.iter().find(|o| o.claims(target)) {
        return opener.reencrypt(target, from, to);
    }
    refuse_unclaimed_url(target)?;
    EmbeddedStore::reencrypt(target, from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_no_opener_claims_is_refused_and_touches_no_disk() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::env::current_dir().unwrap();
        for url in ["postgres://u:secret@127.0.0.1:1/db", "postgresql://h/db", "mysql://h/db"] {
            let e = open(url, StoreOptions::default()).err().expect("refused");
            let m = e.to_string();
            assert!(matches!(e, Error::InvalidArgument(_)) && m.contains("://") && !m.contains("secret"), "{m}");
            let e = reencrypt(url, None, None).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        }
        assert!(!cwd.join("postgres:").exists() && !cwd.join("mysql:").exists());
        // A directory whose name merely holds `://` further in is still a directory, and so is a
        // Windows drive spelt with two slashes.
        let e = open("C://no/such/dir", StoreOptions { create: false, ..Default::default() }).err();
        assert!(!matches!(e, Some(Error::InvalidArgument(_))), "{e:?}");
        let inner = dir.path().join("a://b");
        open(inner.to_str().unwrap(), StoreOptions::default()).expect("a directory").close().unwrap();
    }
}
