//! Running a step's CPU-heavy work without stalling the other tasks of its worker.
//!
//! Steps run on the runtime's worker threads. A few pieces of work that message data can
//! make long (compiling or matching a regex taken from a header, inflating a compressed
//! body) would hold that worker, and every task queued on it, for as long as they last.
//! [`in_place`] runs them under `tokio::task::block_in_place` where the runtime allows it
//! (a multi-threaded runtime, as the `camel` binary's): the worker's other tasks move to
//! another thread meanwhile. Elsewhere (a current-thread runtime, no runtime) the work
//! simply runs.
//!
//! ```
//! assert_eq!(camel_api::blocking::in_place(|| 6 * 7), 42);
//! ```

/// Runs `work` so that it does not hold up the other tasks of the current worker thread
/// (see the module docs).
pub fn in_place<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_on_a_multi_threaded_runtime() {
        let n = tokio::spawn(async { super::in_place(|| 1 + 1) })
            .await
            .unwrap();
        assert_eq!(n, 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn runs_on_a_current_thread_runtime() {
        assert_eq!(super::in_place(|| 3), 3);
    }
}
