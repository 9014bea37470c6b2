//! One generic `Task`: a boxed job run on the libuv pool, its panics caught there, its fault
//! turned into a JS error back on the JS thread.

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{Env, Task};

use crate::fault::{Fault, FaultResult, guard};

type Job<T> = Box<dyn FnOnce() -> FaultResult<T> + Send>;

pub struct Work<T: Send + 'static> {
    job: Option<Job<T>>,
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Work<T> {
    type Output = FaultResult<T>;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let job = self.job.take();
        Ok(match job {
            Some(job) => guard(job),
            None => Err(Fault { code: "RABOSH_PANIC", message: "task ran twice".into(), holder: None }),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<T> {
        output.map_err(|fault| fault.into_napi(&env))
    }
}

/// Queue `job` on the libuv pool; the JS side gets a Promise.
pub fn work<T, F>(job: F) -> AsyncTask<Work<T>>
where
    T: ToNapiValue + TypeName + Send + 'static,
    F: FnOnce() -> FaultResult<T> + Send + 'static,
{
    AsyncTask::new(Work { job: Some(Box::new(job)) })
}
