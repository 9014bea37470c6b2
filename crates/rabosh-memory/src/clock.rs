//! Where timestamps come from: the system clock, or a test's own.

use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> i64 + Send + Sync>);

impl Clock {
    #[must_use]
    pub fn system() -> Clock {
        Clock(Arc::new(|| match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as i64,
            Err(e) => -(e.duration().as_millis() as i64),
        }))
    }

    pub fn from_fn(f: impl Fn() -> i64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(f))
    }

    #[must_use]
    pub fn now_ms(&self) -> i64 {
        (self.0)()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Clock")
    }
}
