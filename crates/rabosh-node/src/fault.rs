//! Faults (not outcomes) cross to JS as `Error` objects carrying a stable `code`, plus `holder`
//! for a lock error and `expired` for an expiry whose reclaim failed, so the facade can pick a
//! class without parsing messages.

use std::any::Any;

use napi::bindgen_prelude::{JsObjectValue, JsValue};
use napi::{Env, Status};
use napi_derive::napi;
use rabosh_memory::{Error, LockHolder};

use crate::fault_codes as codes;

/// A fault as plain data, built on whichever thread hit it and turned into a JS error on the
/// JS thread.
#[derive(Debug, Clone)]
pub struct Fault {
    pub code: &'static str,
    pub message: String,
    pub holder: Option<LockHolder>,
    /// Memories an expiry deleted (committed) before reclaiming their space failed.
    pub expired: Option<u64>,
}

pub type FaultResult<T> = std::result::Result<T, Fault>;

/// Who holds a store's lock, as it crosses on a `RABOSH_STORE_LOCKED` or `RABOSH_STORE_BUSY`
/// error's `holder`: the facade's `LockHolder` is made from it (its start as a `Date`).
#[napi(object, object_from_js = false)]
pub struct NativeLockHolder {
    /// Process id of the holder, when the holder record could be read.
    pub pid: Option<u32>,
    /// Host name of the holder.
    pub host: Option<String>,
    /// Holder process start time, milliseconds since the Unix epoch.
    pub started_at_ms: Option<f64>,
    /// A process with that pid and that start time runs on this host now.
    pub is_running: bool,
    /// The holder is this very process (the store is already open here).
    pub this_process: bool,
}

impl From<&LockHolder> for NativeLockHolder {
    fn from(h: &LockHolder) -> Self {
        NativeLockHolder {
            pid: h.pid,
            host: h.host.clone(),
            started_at_ms: h.started_at_ms.map(|ms| ms as f64),
            is_running: h.is_running,
            this_process: h.this_process,
        }
    }
}

impl Fault {
    pub fn invalid_option(option: &'static str, value: impl Into<String>) -> Fault {
        Error::InvalidOption { option, value: value.into() }.into()
    }

    /// A fault of the caller's arguments that the memory crate never sees.
    pub fn invalid_argument(message: String) -> Fault {
        Error::InvalidArgument(message).into()
    }

    /// An expiry that committed its deletions and then failed to reclaim the space: an IO fault
    /// that says both, with the count on the error (`expired`).
    pub fn expired_but_not_reclaimed(count: u64, reclaim: &Error) -> Fault {
        let message =
            format!("expired {count} memories (deleted and committed), then reclaiming their space failed: {reclaim}");
        Fault { code: codes::IO, message, holder: None, expired: Some(count) }
    }

    /// A panic inside the engine or the memory crate: the process lives on, the call fails.
    pub fn panic(payload: &(dyn Any + Send)) -> Fault {
        let what = payload
            .downcast_ref::<&str>()
            .map(std::string::ToString::to_string)
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".into());
        Fault { code: codes::PANIC, message: format!("internal error (panic): {what}"), holder: None, expired: None }
    }

    /// The JS error: `message`, `code`, and `holder` for `RABOSH_STORE_LOCKED`.
    pub fn into_napi(self, env: Env) -> napi::Error {
        match self.build(env) {
            Ok(err) => err,
            // Could not even build the object: fall back to a plain error keeping the code in text.
            Err(e) => napi::Error::new(Status::GenericFailure, format!("{}: {} ({e})", self.code, self.message)),
        }
    }

    fn build(&self, env: Env) -> napi::Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, self.message.clone()))?;
        obj.set_named_property("code", self.code)?;
        if let Some(h) = &self.holder {
            obj.set_named_property("holder", NativeLockHolder::from(h))?;
        }
        if let Some(count) = self.expired {
            obj.set_named_property("expired", count as f64)?;
        }
        Ok(napi::Error::from(obj.to_unknown()))
    }
}

impl From<Error> for Fault {
    fn from(e: Error) -> Fault {
        let code = match &e {
            Error::Io(_) => codes::IO,
            Error::Corruption(_) => codes::CORRUPTION,
            Error::UnsupportedFormat(_) => codes::UNSUPPORTED_FORMAT,
            Error::Locked { .. } => codes::STORE_LOCKED,
            Error::Busy { .. } => codes::STORE_BUSY,
            Error::Poisoned(_) => codes::POISONED,
            Error::Closed => codes::CLOSED,
            Error::NotAStore(_) => codes::NOT_A_STORE,
            Error::WrongKey(_) => codes::WRONG_KEY,
            Error::KeyRequired(_) => codes::KEY_REQUIRED,
            Error::NotEncrypted(_) => codes::NOT_ENCRYPTED,
            Error::InvalidArgument(_) | Error::NotNormalised(_) => codes::INVALID_ARGUMENT,
            Error::InvalidOption { .. } | Error::UnknownOption(_) | Error::OptionUnsupported { .. } => {
                codes::INVALID_OPTION
            }
            Error::Unsupported(_) => codes::UNSUPPORTED,
            Error::Backend(e) => e.code(),
        };
        let message = e.to_string();
        let holder = match e {
            Error::Locked { holder, .. } | Error::Busy { holder, .. } => Some(holder),
            _ => None,
        };
        Fault { code, message, holder, expired: None }
    }
}

/// Runs `f`, turning a panic into a fault; for the few calls that stay on the JS thread.
pub fn guard<T>(f: impl FnOnce() -> FaultResult<T>) -> FaultResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| Err(Fault::panic(&*p)))
}

/// `guard`, then a fault becomes a thrown JS error.
pub fn on_js_thread<T>(env: Env, f: impl FnOnce() -> FaultResult<T>) -> napi::Result<T> {
    guard(f).map_err(|fault| fault.into_napi(env))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_keeps_its_code() {
        let lock = LockHolder {
            pid: Some(42),
            host: Some("h".into()),
            started_at_ms: Some(1),
            is_running: true,
            this_process: false,
        };
        let f: Fault = Error::Locked { message: "locked".into(), holder: lock.clone() }.into();
        assert_eq!(f.code, "RABOSH_STORE_LOCKED");
        assert_eq!(f.holder, Some(lock));
        let cases = [
            (Error::Io("x".into()), "RABOSH_IO"),
            (Error::Corruption("x".into()), "RABOSH_CORRUPTION"),
            (Error::UnsupportedFormat("x".into()), "RABOSH_UNSUPPORTED_FORMAT"),
            (Error::Poisoned("r".into()), "RABOSH_POISONED"),
            (Error::Closed, "RABOSH_CLOSED"),
            (Error::NotAStore("x".into()), "RABOSH_NOT_A_STORE"),
            (Error::WrongKey("x".into()), "RABOSH_WRONG_KEY"),
            (Error::KeyRequired("x".into()), "RABOSH_KEY_REQUIRED"),
            (Error::NotEncrypted("x".into()), "RABOSH_NOT_ENCRYPTED"),
            (Error::InvalidArgument("x".into()), "RABOSH_INVALID_ARGUMENT"),
            (Error::NotNormalised("x".into()), "RABOSH_INVALID_ARGUMENT"),
            (Error::UnknownOption("x".into()), "RABOSH_INVALID_OPTION"),
            (
                Error::Unsupported(rabosh_memory::Unsupported { what: "x".into(), backend: "B", why: "w" }),
                "RABOSH_UNSUPPORTED",
            ),
        ];
        for (e, code) in cases {
            let f: Fault = e.into();
            assert_eq!((f.code, f.holder, f.expired), (code, None, None));
        }
    }

    #[test]
    fn every_code_is_listed_once() {
        let all = crate::fault_codes::fault_codes();
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "{all:?}");
        let raised = [
            Fault::from(Error::Closed).code,
            Fault::panic(&"x").code,
            Fault::invalid_option("o", "v").code,
            Fault::expired_but_not_reclaimed(1, &Error::Io("x".into())).code,
        ];
        for code in raised {
            assert!(all.iter().any(|c| c == code), "{code} is not in fault_codes");
        }
    }

    #[test]
    fn a_failed_reclaim_reports_the_committed_expiry() {
        let f = Fault::expired_but_not_reclaimed(3, &Error::Io("write failed on seg: disk full".into()));
        assert_eq!((f.code, f.expired), ("RABOSH_IO", Some(3)));
        assert!(f.message.contains("expired 3 memories") && f.message.contains("disk full"), "{}", f.message);
    }

    #[test]
    fn an_invalid_option_names_option_and_value() {
        let f = Fault::invalid_option("maxMemoryBytes", "0");
        assert_eq!(f.code, "RABOSH_INVALID_OPTION");
        assert!(f.message.contains("maxMemoryBytes") && f.message.contains('0'), "{}", f.message);
    }

    #[test]
    fn guard_catches_a_panic_on_the_calling_thread() {
        let f = guard::<()>(|| panic!("on the JS thread")).unwrap_err();
        assert_eq!(f.code, "RABOSH_PANIC");
    }
}
