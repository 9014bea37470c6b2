//! One generic `Task`: a boxed job run on the libuv pool, its panics caught there, its fault
//! turned into a JS error back on the JS thread; or, for a store with threads of its own, the
//! same job run there ([`run_off_thread`]).

use napi::bindgen_prelude::{AsyncTask, JsValue, Object, ToNapiValue, TypeName};
use std::sync::Arc;

use napi::{Env, Task};
use rabosh_memory::Workers;

use crate::fault::{Fault, FaultResult, guard};

type Job<T> = Box<dyn FnOnce() -> FaultResult<T> + Send>;

pub struct Work<T: Send + 'static> {
    job: Option<Job<T>>,
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Work<T> {
    type Output = FaultResult<T>;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(run_job(self.job.take()))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<T> {
        output.map_err(|fault| fault.into_napi(env))
    }
}

/// The job's result, a panic caught as a fault (a task is computed once; a second run faults).
fn run_job<T>(job: Option<Job<T>>) -> FaultResult<T> {
    match job {
        Some(job) => guard(job),
        None => Err(Fault {
            code: crate::fault_codes::PANIC,
            message: "task ran twice".into(),
            holder: None,
            expired: None,
        }),
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

/// [`work`] for a method that returns its promise as an object (one that may also settle its
/// promise some other way).
pub fn work_promise<T, F>(env: &Env, job: F) -> napi::Result<Object<'_>>
where
    T: ToNapiValue + TypeName + Send + 'static,
    F: FnOnce() -> FaultResult<T> + Send + 'static,
{
    let promise = env.spawn(Work { job: Some(Box::new(job)) })?.promise_object();
    Ok(Object::from_raw(env.raw(), promise.raw()))
}

/// [`work_promise`], except on a store with threads of its own (`workers`: PostgreSQL), where
/// `job` runs on one of those and settles through the completion channel: a call that waits on
/// the network (or sleeps between conflict retries) never holds one of libuv's threads, which
/// every `fs` and `dns` call of the process shares.
pub fn run_off_thread<'env, T, F>(env: &'env Env, workers: Option<&Arc<Workers>>, job: F) -> napi::Result<Object<'env>>
where
    T: ToNapiValue + TypeName + Send + 'static,
    F: FnOnce() -> FaultResult<T> + Send + 'static,
{
    let Some(workers) = workers else { return work_promise(env, job) };
    let (pending, promise) = crate::completion::promise(env)?;
    workers.submit(Box::new(move || pending.settle(guard(job))));
    Ok(Object::from_raw(env.raw(), promise))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T: 'static>(job: impl FnOnce() -> FaultResult<T> + Send + 'static) -> FaultResult<T> {
        run_job(Some(Box::new(job)))
    }

    #[test]
    fn a_panic_on_the_pool_becomes_a_coded_fault() {
        let f = run::<f64>(|| panic!("boom {}", 7)).expect_err("a panic is a fault");
        assert_eq!(f.code, "RABOSH_PANIC");
        assert!(f.message.contains("boom 7"), "{}", f.message);
    }

    #[test]
    fn a_static_str_panic_keeps_its_text() {
        let f = run::<f64>(|| std::panic::panic_any("plain")).unwrap_err();
        assert!(f.message.contains("plain"), "{}", f.message);
    }

    #[test]
    fn results_and_faults_pass_through() {
        assert_eq!(run(|| Ok(2.5f64)).unwrap().to_bits(), 2.5f64.to_bits());
        let f = run::<f64>(|| Err(rabosh_memory::Error::Closed.into())).unwrap_err();
        assert_eq!(f.code, "RABOSH_CLOSED");
    }

    #[test]
    fn a_task_run_twice_faults_instead_of_panicking() {
        assert_eq!(run_job::<f64>(None).unwrap_err().code, "RABOSH_PANIC");
    }
}
