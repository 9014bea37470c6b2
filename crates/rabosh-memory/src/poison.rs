//! A backend's poisoned flag: set by the first commit whose outcome is unknown (an IO fault after
//! the commit reached storage, or a panic while committing), answered by every later call.

use std::sync::Mutex;

use crate::{Error, Result};

#[derive(Debug, Default)]
pub struct Poison(Mutex<Option<String>>);

impl Poison {
    pub fn check(&self) -> Result<()> {
        match &*self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) {
            Some(reason) => Err(Error::Poisoned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Records the first reason only: later failures are consequences of it.
    pub fn set(&self, reason: impl Into<String>) {
        let mut g = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if g.is_none() {
            *g = Some(reason.into());
        }
    }

    /// Poisons if the current thread unwinds before [`PanicGuard::disarm`] (or drop after it).
    pub fn on_panic(&self) -> PanicGuard<'_> {
        PanicGuard(self)
    }
}

/// Held across a commit: a panic unwinding through it poisons, so no later call continues on
/// state the panic may have left half-updated.
pub struct PanicGuard<'a>(&'a Poison);

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.set("a panic while committing");
        }
    }
}
