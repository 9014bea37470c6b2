//! Faults (not outcomes) cross to JS as `Error` objects carrying a stable `code`, plus `holder`
//! for a lock error, so the facade can pick a class without parsing messages.

use std::any::Any;

use napi::bindgen_prelude::{JsObjectValue, JsValue, Object};
use napi::{Env, Status};

/// A fault as plain data, built on whichever thread hit it and turned into a JS error on the
/// JS thread.
#[derive(Debug)]
pub struct Fault {
    pub code: &'static str,
    pub message: String,
    pub holder: Option<rabosh::LockHolder>,
}

pub type FaultResult<T> = std::result::Result<T, Fault>;

impl Fault {
    pub fn invalid_option(option: &'static str, value: impl Into<String>) -> Fault {
        rabosh_memory::Error::InvalidOption { option, value: value.into() }.into()
    }

    /// A panic inside the engine or the memory crate: the process lives on, the call fails.
    pub fn panic(payload: Box<dyn Any + Send>) -> Fault {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".into());
        Fault { code: "RABOSH_PANIC", message: format!("internal error (panic): {what}"), holder: None }
    }

    /// The JS error: `message`, `code`, and `holder` for `RABOSH_STORE_LOCKED`.
    pub fn into_napi(self, env: &Env) -> napi::Error {
        match self.build(env) {
            Ok(err) => err,
            // Could not even build the object: fall back to a plain error keeping the code in text.
            Err(e) => napi::Error::new(Status::GenericFailure, format!("{}: {} ({e})", self.code, self.message)),
        }
    }

    fn build(&self, env: &Env) -> napi::Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, self.message.clone()))?;
        obj.set_named_property("code", self.code)?;
        if let Some(h) = &self.holder {
            let mut holder = Object::new(env)?;
            holder.set_named_property("pid", h.pid.map(f64::from))?;
            holder.set_named_property("host", h.host.clone())?;
            holder.set_named_property("startedAtMs", h.started_at_ms.map(|ms| ms as f64))?;
            holder.set_named_property("isRunning", h.is_running)?;
            holder.set_named_property("thisProcess", h.this_process)?;
            obj.set_named_property("holder", holder)?;
        }
        Ok(napi::Error::from(obj.to_unknown()))
    }
}

impl From<rabosh_memory::Error> for Fault {
    fn from(e: rabosh_memory::Error) -> Fault {
        match e {
            rabosh_memory::Error::Engine(e) => e.into(),
            rabosh_memory::Error::InvalidOption { .. } => {
                Fault { code: "RABOSH_INVALID_OPTION", message: e.to_string(), holder: None }
            }
            rabosh_memory::Error::NotNormalised(_) => {
                Fault { code: "RABOSH_INVALID_ARGUMENT", message: e.to_string(), holder: None }
            }
            rabosh_memory::Error::Postgres(ref pg) => Fault { code: pg.code(), message: e.to_string(), holder: None },
        }
    }
}

impl From<rabosh::Error> for Fault {
    fn from(e: rabosh::Error) -> Fault {
        let holder = match &e {
            rabosh::Error::Locked { holder, .. } => Some(holder.clone()),
            _ => None,
        };
        Fault { code: e.code(), message: e.to_string(), holder }
    }
}

/// Runs `f`, turning a panic into a fault; for the few calls that stay on the JS thread.
pub fn guard<T>(f: impl FnOnce() -> FaultResult<T>) -> FaultResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| Err(Fault::panic(p)))
}

/// `guard`, then a fault becomes a thrown JS error.
pub fn on_js_thread<T>(env: &Env, f: impl FnOnce() -> FaultResult<T>) -> napi::Result<T> {
    guard(f).map_err(|fault| fault.into_napi(env))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_error_keeps_its_code() {
        let lock = rabosh::LockHolder {
            pid: Some(42),
            host: Some("h".into()),
            started_at_ms: Some(1),
            is_running: true,
            this_process: false,
        };
        let f: Fault = rabosh::Error::Locked { dir: "d".into(), holder: lock.clone() }.into();
        assert_eq!(f.code, "RABOSH_STORE_LOCKED");
        assert_eq!(f.holder, Some(lock));
        let f: Fault = rabosh_memory::Error::Engine(rabosh::Error::Poisoned { reason: "r".into() }).into();
        assert_eq!((f.code, f.holder), ("RABOSH_POISONED", None));
        let f: Fault = rabosh::Error::InvalidArgument("x".into()).into();
        assert_eq!(f.code, "RABOSH_INVALID_ARGUMENT");
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
