//! Deliveries that did not finish in their first poll (a route that waits: a broker
//! call, a timer), driven together on one task per partition worker.
//!
//! A task per delivery cost about 3,300 instructions per relayed message (the spawn, the
//! join set's entry and its lock, the wake-ups; callgrind). Here a waiting delivery costs a
//! channel send, a slot in the driver's `FuturesUnordered`, and a channel send back. The
//! driver is spawned with the first waiting delivery (a relay into synchronous routes never
//! starts one) and lives as long as the worker: dropping the worker aborts it, which drops
//! every delivery still running — the same as aborting their tasks did. Each delivery still
//! runs apart from the worker's loop, so a slow route never holds up reading or deleting.

use std::panic::AssertUnwindSafe;

use camel_api::CamelError;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;
use tokio_util::task::AbortOnDropHandle;

use super::partition::panic_message;

/// Which message (id, attempts before) and how its delivery went.
pub(super) type Delivered = ((i64, u32), Result<(), CamelError>);

type Waiting = ((i64, u32), BoxFuture<'static, Result<(), CamelError>>);

/// The driver task ended while deliveries were counted: one panicked outside its own
/// poll (in its drop), or the runtime is shutting down. Which message it was is lost.
#[derive(Debug)]
pub(super) struct DriverLost {
    /// True for a panic, false when the task was aborted (runtime shutdown).
    pub(super) panicked: bool,
    pub(super) reason: String,
}

/// The deliveries of one partition that are still running.
#[derive(Default)]
pub(super) struct Running {
    count: usize,
    driver: Option<Driver>,
}

struct Driver {
    submit: mpsc::UnboundedSender<Waiting>,
    done: mpsc::UnboundedReceiver<Delivered>,
    task: AbortOnDropHandle<()>,
}

impl Running {
    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Runs `delivery` (already polled once) to its end on the driver.
    pub(super) fn push(
        &mut self,
        key: (i64, u32),
        delivery: BoxFuture<'static, Result<(), CamelError>>,
    ) {
        let driver = self.driver.get_or_insert_with(Driver::spawn);
        self.count += 1;
        // Fails only when the driver died; `next` then reports that.
        let _ = driver.submit.send((key, delivery));
    }

    /// A finished delivery, if one is waiting to be collected.
    pub(super) async fn try_next(&mut self) -> Option<Result<Delivered, DriverLost>> {
        if self.count == 0 {
            return None;
        }
        let driver = self.driver.as_mut()?;
        match driver.done.try_recv() {
            Ok(delivered) => {
                self.count -= 1;
                Some(Ok(delivered))
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(self.lost().await)),
        }
    }

    /// The next delivery to finish; `None` when none is running.
    pub(super) async fn next(&mut self) -> Option<Result<Delivered, DriverLost>> {
        if self.count == 0 {
            return None;
        }
        let driver = self.driver.as_mut()?;
        match driver.done.recv().await {
            Some(delivered) => {
                self.count -= 1;
                Some(Ok(delivered))
            }
            None => Some(Err(self.lost().await)),
        }
    }

    /// The driver is gone: why, and nothing is counted as running any more.
    async fn lost(&mut self) -> DriverLost {
        self.count = 0;
        let Some(driver) = self.driver.take() else {
            return DriverLost {
                panicked: false,
                reason: "no driver".into(),
            };
        };
        match driver.task.await {
            Err(e) if e.is_panic() => DriverLost {
                panicked: true,
                reason: e.to_string(),
            },
            Err(e) => DriverLost {
                panicked: false,
                reason: e.to_string(),
            },
            Ok(()) => DriverLost {
                panicked: false,
                reason: "the driver stopped".into(),
            },
        }
    }
}

impl Driver {
    fn spawn() -> Self {
        let (submit, mut waiting) = mpsc::unbounded_channel::<Waiting>();
        let (finished, done) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut running = FuturesUnordered::new();
            loop {
                tokio::select! {
                    biased;
                    Some(delivered) = running.next(), if !running.is_empty() => {
                        if finished.send(delivered).is_err() {
                            return;
                        }
                    }
                    next = waiting.recv() => match next {
                        Some((key, delivery)) => running.push(run(key, delivery)),
                        // The worker is gone: what still runs is dropped with this task.
                        None => return,
                    },
                }
            }
        });
        Driver {
            submit,
            done,
            task: AbortOnDropHandle::new(task),
        }
    }
}

/// One delivery to its end; a panic in a poll counts as a failed attempt, as it does in
/// the worker's first poll.
async fn run(key: (i64, u32), delivery: BoxFuture<'static, Result<(), CamelError>>) -> Delivered {
    let result = AssertUnwindSafe(delivery)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            Err(CamelError::processor(format!(
                "delivery panicked: {}",
                panic_message(&*panic)
            )))
        });
    (key, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(result: Result<(), CamelError>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            result
        })
    }

    #[tokio::test]
    async fn every_delivery_comes_back_once_with_its_key_and_result() {
        let mut running = Running::default();
        assert!(running.next().await.is_none(), "nothing running");
        for id in 0..100 {
            let result = if id % 7 == 0 {
                Err(CamelError::processor("refused"))
            } else {
                Ok(())
            };
            running.push((id, 0), waiting(result));
        }
        let mut seen = Vec::new();
        while let Some(delivered) = running.next().await {
            let ((id, _), result) = delivered.expect("the driver lives");
            assert_eq!(result.is_err(), id % 7 == 0, "message {id}");
            seen.push(id);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        assert!(running.is_empty());
    }

    #[tokio::test]
    async fn a_panic_in_a_poll_is_a_failed_attempt() {
        let mut running = Running::default();
        running.push(
            (1, 0),
            Box::pin(async {
                tokio::task::yield_now().await;
                panic!("boom")
            }),
        );
        let ((id, _), result) = running.next().await.unwrap().unwrap();
        assert_eq!(id, 1);
        assert!(result.unwrap_err().to_string().contains("boom"));
    }

    /// A delivery that completes, and panics when the finished future is dropped: after
    /// its last poll, so no `catch_unwind` around a poll sees it.
    struct PanicsWhenDropped;

    impl std::future::Future for PanicsWhenDropped {
        type Output = Result<(), CamelError>;
        fn poll(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Self::Output> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("in drop");
        }
    }

    #[tokio::test]
    async fn a_panic_after_the_last_poll_loses_the_driver_and_says_so() {
        let mut running = Running::default();
        running.push((1, 0), Box::pin(PanicsWhenDropped));
        let lost = running.next().await.unwrap().unwrap_err();
        assert!(lost.panicked, "{lost:?}");
        assert!(running.is_empty());
    }

    #[tokio::test]
    async fn a_panic_while_a_delivery_unwinds_its_own_state_is_a_failed_attempt() {
        struct Guard;
        impl Drop for Guard {
            fn drop(&mut self) {
                panic!("guard dropped");
            }
        }
        let mut running = Running::default();
        running.push(
            (2, 0),
            Box::pin(async {
                let _guard = Guard;
                tokio::task::yield_now().await;
                Ok(())
            }),
        );
        let ((id, _), result) = running.next().await.unwrap().unwrap();
        assert_eq!(id, 2);
        assert!(result.unwrap_err().to_string().contains("guard dropped"));
    }

    #[tokio::test]
    async fn dropping_the_running_set_drops_what_still_runs() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut running = Running::default();
        running.push(
            (1, 0),
            Box::pin(async move {
                // Never finishes; holds `tx` until dropped.
                let _tx = tx;
                std::future::pending::<()>().await;
                Ok(())
            }),
        );
        tokio::task::yield_now().await;
        drop(running);
        assert!(
            rx.await.is_err(),
            "the delivery was dropped with the driver"
        );
    }
}
