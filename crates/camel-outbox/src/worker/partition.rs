//! The worker of one partition: reads rows by id, lets the [`Scheduler`] decide what goes
//! out, runs up to `max_inflight` deliveries at once, records their outcomes, and deletes
//! confirmed rows in batches.
//!
//! Every database call goes through the [`PartitionStore`], which on PostgreSQL is the
//! connection holding the partition's lock: when the lock is lost the next call fails and
//! the worker stops before it can change a row.

use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use camel_api::CamelError;
use futures::future::BoxFuture;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::health::Report;
use super::horizon::{Advice, HorizonWatch};
use super::running::{Delivered, DriverLost, Running};
use super::scheduler::{Exclusion, Fetch, Scheduler};
use super::Handler;
use crate::error::Result;
use crate::message::{now_ms, StoredMessage};
use crate::metrics::WorkerMetrics;
use crate::outbox::Outbox;
use crate::store::{Page, PartitionStore, Position};

/// How long a confirmed row may wait for its delete batch to fill while deliveries are
/// in flight. Bounds the re-deliveries after a crash to what confirmed in this window.
const DELETE_LINGER: Duration = Duration::from_millis(20);

/// A finished delivery, or the driver of the waiting ones lost (see [`Running`]).
type Outcome = std::result::Result<Delivered, DriverLost>;

/// A delivery after its first poll.
enum Started {
    /// It completed in that poll.
    Done(Result<(), CamelError>),
    /// It waits; its task polls it on.
    Waiting(BoxFuture<'static, Result<(), CamelError>>),
}

/// Starts a delivery and polls it once, without a waker: a delivery that is not done is
/// polled again by its own task with a real waker, which is all a future may rely on. A
/// panic, in the handler call or in that poll, counts as a failed attempt, as it does in
/// a task.
fn start_delivery(handler: &Handler, message: StoredMessage) -> Started {
    let mut cx = Context::from_waker(Waker::noop());
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut deliver = handler(message);
        match deliver.as_mut().poll(&mut cx) {
            Poll::Ready(result) => Started::Done(result),
            Poll::Pending => Started::Waiting(deliver),
        }
    }));
    started.unwrap_or_else(|panic| {
        Started::Done(Err(CamelError::processor(format!(
            "delivery panicked: {}",
            panic_message(&*panic)
        ))))
    })
}

pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// One partition's relay loop.
pub(crate) struct PartitionWorker<S> {
    store: S,
    sched: Scheduler,
    outbox: Outbox,
    partition: u32,
    handler: Handler,
    metrics: WorkerMetrics,
    deliveries: Running,
    batch: u32,
    horizon: HorizonWatch,
    health: Report,
}

impl<S: PartitionStore> PartitionWorker<S> {
    pub(crate) fn new(store: S, outbox: Outbox, partition: u32, handler: Handler) -> Self {
        let cfg = outbox.config();
        let batch = cfg.batch_size;
        let horizon = HorizonWatch::new(cfg.poll_interval);
        PartitionWorker {
            sched: Scheduler::new(cfg.ordering, cfg.effective_inflight(), batch as usize),
            metrics: WorkerMetrics::new(&cfg.name, partition),
            store,
            outbox,
            partition,
            handler,
            deliveries: Running::default(),
            batch,
            horizon,
            health: Report::default(),
        }
    }

    /// Reports the partition up once its first read from the store succeeded.
    pub(crate) fn reporting_to(mut self, health: Report) -> Self {
        self.health = health;
        self
    }

    /// Runs until `cancel` fires (then drains what is in flight and returns the store) or a
    /// database call fails (ownership is then in doubt: in-flight deliveries are dropped
    /// and will be delivered again by the next owner).
    pub(crate) async fn run(mut self, cancel: &CancellationToken) -> Result<S> {
        let outbox = self.outbox.clone();
        let cfg = outbox.config();
        let waker = outbox.waker(self.partition);
        let mut scan_needed = true;
        let mut sweep: Option<Position> = None;
        let mut next_sweep = Instant::now() + cfg.sweep_interval;
        let mut next_poll = Instant::now() + cfg.poll_interval;
        // Admin changes (discard, retry_dead): counted in the database for every process,
        // and in memory for this one so a local change is checked at once.
        let mut admin_epoch = self.store.admin_epoch().await?;
        self.health.up(self.partition);
        let mut local_changes = outbox.admin_changes();
        let mut check_admin = false;
        loop {
            if cancel.is_cancelled() {
                return self.drain().await;
            }
            let changes = outbox.admin_changes();
            if check_admin || changes != local_changes {
                local_changes = changes;
                check_admin = false;
                let epoch = self.store.admin_epoch().await?;
                if epoch != admin_epoch {
                    admin_epoch = epoch;
                    // What is held back may be gone (discarded) or back (revived): re-read
                    // every held group and message now, not at its retry time. A head
                    // still in backoff is held again until its stored retry time.
                    self.sched.on_admin_change();
                    scan_needed = true;
                    sweep.get_or_insert_with(Position::default);
                }
            }
            // Finished deliveries first: what they release (a group's next message, a
            // catch-up read) is then handled in this turn, not after the next wake-up.
            while let Some(outcome) = self.deliveries.try_next().await {
                self.complete(outcome).await?;
            }
            self.sched.fire_due(now_ms());
            while let Some(fetch) = self.sched.next_fetch() {
                self.fetch(fetch).await?;
            }
            if scan_needed && self.sched.scan_allowed() {
                if let Exclusion::Groups(skip) = self.sched.exclusion() {
                    let page = self
                        .store
                        .scan(self.sched.frontier(), self.batch, &skip)
                        .await?;
                    scan_needed = page.full(self.batch);
                    // The replication stream can announce a commit a moment before the
                    // server counts the transaction as ended, and a read made in that
                    // moment does not see its rows. A row whose order key is below the
                    // read's horizon was visible to it, so until the horizon passes the
                    // highest order key streamed, the rows wait like held-back ones and
                    // are read again shortly (not at the next poll).
                    let streamed = outbox.streamed_order(self.partition);
                    let awaited = streamed > 0 && streamed >= page.horizon;
                    // A row's order key can be one past the newest transaction that had
                    // ended when it was inserted. Once nothing runs, the horizon stops
                    // there, equal to the key, until some transaction takes a new id: on
                    // a quiet server, never. Held back twice at the same quiet horizon,
                    // the worker takes an id itself and reads again (ADR 0174).
                    let stuck = (page.held_back || awaited)
                        && page.quiet
                        && self.horizon.waiting_at(page.horizon);
                    self.watch_horizon(&page, awaited).await?;
                    if stuck {
                        self.store.pass_horizon().await?;
                        scan_needed = true;
                    }
                    if let Some(last) = page.rows.last() {
                        self.sched.advance(last.at);
                    }
                    self.sched
                        .accept(page.rows.into_iter().map(|r| r.message), now_ms());
                }
            }
            let sweep_due = sweep.is_some() || Instant::now() >= next_sweep;
            if sweep_due && self.sched.scan_allowed() {
                if let Exclusion::Groups(skip) = self.sched.exclusion() {
                    sweep = self.sweep_page(sweep.unwrap_or_default(), &skip).await?;
                    if sweep.is_none() {
                        next_sweep = Instant::now() + cfg.sweep_interval;
                    }
                }
            }
            self.dispatch().await?;
            if self.sched.pending_deletes() >= self.batch as usize {
                self.flush().await?;
            }
            // Work left for another turn: a read the scheduler asked for (a dispatch can
            // empty a group down to its overflow mark), or more of a scan or sweep.
            if self.sched.has_fetches()
                || (scan_needed || sweep.is_some()) && self.sched.scan_allowed()
            {
                tokio::task::yield_now().await;
                continue;
            }
            // Confirmed rows are deleted in batches: at once when idle, else when the
            // batch is full or its oldest confirmation has waited DELETE_LINGER.
            let linger_over = self
                .sched
                .oldest_delete()
                .is_some_and(|t| t.elapsed() >= DELETE_LINGER);
            if self.deliveries.is_empty() || linger_over {
                self.flush().await?;
            }
            let mut wake_at = next_poll;
            if let Some(t) = self.sched.oldest_delete() {
                wake_at = wake_at.min(t + DELETE_LINGER);
            }
            if next_sweep > Instant::now() {
                wake_at = wake_at.min(next_sweep);
            }
            if let Some(due) = self.sched.next_due() {
                let wait = Duration::from_millis((due - now_ms()).max(0) as u64);
                wake_at = wake_at.min(Instant::now() + wait);
            }
            let horizon_read = self.horizon.next_read();
            if let Some(at) = horizon_read {
                wake_at = wake_at.min(at);
            }
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {}
                Some(outcome) = self.deliveries.next(), if !self.deliveries.is_empty() => {
                    self.complete(outcome).await?;
                }
                _ = waker.notified() => scan_needed = true,
                _ = tokio::time::sleep_until(wake_at) => {
                    let now = Instant::now();
                    if now >= next_poll {
                        scan_needed = true;
                        check_admin = true;
                        next_poll = now + cfg.poll_interval;
                    }
                    if horizon_read.is_some_and(|at| now >= at) {
                        scan_needed = true;
                    }
                }
            }
        }
    }

    /// Reads one page of the partition from `after`, up to the frontier, for rows the
    /// frontier scan passed before they committed (or that `retry_dead` put back).
    /// Blocked and overflowing groups are skipped like in the frontier scan: a late row of
    /// such a group can only go out after the group's head anyway, and the first sweep
    /// after the group catches up finds it.
    /// Returns where the next page starts, or `None` when the sweep is done.
    async fn sweep_page(&mut self, after: Position, skip: &[String]) -> Result<Option<Position>> {
        let frontier = self.sched.frontier();
        let mut page = self.store.scan(after, self.batch, skip).await?;
        let full = page.full(self.batch);
        let passed_frontier = page.rows.last().is_some_and(|r| r.at >= frontier);
        page.rows.retain(|r| r.at <= frontier);
        let next = page.rows.last().map(|r| r.at);
        self.sched
            .accept(page.rows.into_iter().map(|r| r.message), now_ms());
        Ok(if full && !passed_frontier { next } else { None })
    }

    /// Keeps the held-back state, its gauge and its warning up to date after a frontier
    /// scan; `awaited`: rows the replication stream announced may not have been visible
    /// to it.
    async fn watch_horizon(&mut self, page: &Page, awaited: bool) -> Result<()> {
        let now = Instant::now();
        let held_back = page.held_back || awaited;
        let advice = self.horizon.on_page(held_back, page.horizon, now);
        self.metrics
            .horizon_wait
            .set(self.horizon.waited(now).as_secs_f64());
        if let Advice::Warn { horizon, waited } = advice {
            let who = self.store.describe_horizon(horizon).await?;
            tracing::warn!(
                outbox = %self.outbox.config().name,
                partition = self.partition,
                transaction = horizon,
                holder = who.as_deref().unwrap_or("not found (it may have just ended)"),
                waited_s = waited.as_secs(),
                "outbox messages wait for an older transaction to end: committed rows are relayed only after every transaction that began before them has ended"
            );
        }
        Ok(())
    }

    async fn fetch(&mut self, fetch: Fetch) -> Result<()> {
        let (rows, complete) = match &fetch {
            Fetch::Group { filter, from, .. } => {
                let rows = self
                    .store
                    .scan_group(filter.as_deref(), *from, self.sched.frontier(), self.batch)
                    .await?;
                let complete = (rows.len() as u32) < self.batch;
                (rows, complete)
            }
            Fetch::Single(id) => {
                // The row's order key is not kept; any key passes, and only `id` is taken.
                let up_to = Position {
                    order: i64::MAX,
                    id: *id,
                };
                let mut rows = self.store.scan_group(None, *id, up_to, 1).await?;
                rows.retain(|m| m.id == *id);
                (rows, true)
            }
        };
        self.sched.on_fetched(&fetch, rows, complete, now_ms());
        Ok(())
    }

    /// Hands out everything the scheduler allows. Each delivery is polled once here: one
    /// that completes at once (a synchronous route) is settled here; the others go on to
    /// the partition's driver task ([`Running`]), so a slow route never holds up the
    /// partition's loop. What
    /// completed at once may release more messages, hence the loop.
    async fn dispatch(&mut self) -> Result<()> {
        let mut done = Vec::new();
        loop {
            while let Some(m) = self.sched.next_dispatch(now_ms()) {
                let key = (m.id, m.attempts);
                match start_delivery(&self.handler, m) {
                    Started::Done(result) => done.push((key, result)),
                    Started::Waiting(deliver) => self.deliveries.push(key, deliver),
                }
            }
            if done.is_empty() {
                return Ok(());
            }
            for ((id, attempts), result) in done.drain(..) {
                self.settle(id, attempts, result).await?;
                // Routes that finish at once never make this task wait: each counts
                // against the task's budget, so the runtime still gets its turn.
                tokio::task::consume_budget().await;
            }
        }
    }

    async fn complete(&mut self, outcome: Outcome) -> Result<()> {
        match outcome {
            Ok(((id, attempts), result)) => self.settle(id, attempts, result).await,
            // A panic the driver could not catch (in a drop): which message it was is
            // lost, so its group would stay in flight. Give the partition up; the next
            // owner delivers the messages again.
            Err(lost) if lost.panicked => Err(crate::error::OutboxError::Config(format!(
                "a delivery panicked outside its delivery: {}",
                lost.reason
            ))),
            // Aborted (only the runtime shutting down does that): the messages stay in
            // the table and go out again with the next owner.
            Err(_) => Ok(()),
        }
    }

    /// Records the outcome of delivering message `id` (attempted `attempts` times before).
    async fn settle(
        &mut self,
        id: i64,
        attempts: u32,
        result: Result<(), CamelError>,
    ) -> Result<()> {
        let error = match result {
            Ok(()) => {
                self.metrics.relayed.increment(1);
                self.sched.on_success(id);
                return Ok(());
            }
            Err(e) => e,
        };
        if let CamelError::Stopping(_) = error {
            // The route is stopping, not failing: hold the message for the next owner
            // without counting an attempt.
            self.sched.on_failure(id, now_ms());
            return Ok(());
        }
        let cfg = self.outbox.config();
        if let CamelError::RetryAfter { ms, .. } = &error {
            // Back-pressure, not failure: no attempt is used up, so the count (and with
            // it the backoff and max_attempts) only ever reflects real failures.
            self.metrics.refusals.increment(1);
            tracing::debug!(outbox = %cfg.name, partition = self.partition, id, retry_after_ms = ms, "outbox delivery refused; retrying later");
            return self.retry_later(id, attempts, now_ms() + *ms as i64).await;
        }
        self.metrics.failures.increment(1);
        let attempts = attempts.saturating_add(1);
        tracing::warn!(outbox = %cfg.name, partition = self.partition, id, attempts, error = %error, "outbox delivery failed");
        if cfg.max_attempts.exhausted(attempts) {
            self.store.bury(id, attempts, &error.to_string()).await?;
            self.metrics.dead.increment(1);
            tracing::warn!(outbox = %cfg.name, partition = self.partition, id, attempts, "outbox message is dead");
            self.sched.on_gone(id);
            return Ok(());
        }
        let retry_at = now_ms() + cfg.backoff.delay(attempts).as_millis() as i64;
        self.retry_later(id, attempts, retry_at).await
    }

    /// Stores the attempt count and retry time of `id` and holds it (with its group)
    /// until then.
    async fn retry_later(&mut self, id: i64, attempts: u32, retry_at: i64) -> Result<()> {
        if self.store.record_failure(id, attempts, retry_at).await? {
            self.sched.on_failure(id, retry_at);
        } else {
            self.sched.on_gone(id);
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<()> {
        if self.sched.pending_deletes() == 0 {
            return Ok(());
        }
        let ids = self.sched.take_deletes();
        self.store.delete(&ids).await?;
        self.sched.on_deleted(&ids);
        Ok(())
    }

    async fn drain(mut self) -> Result<S> {
        while let Some(outcome) = self.deliveries.next().await {
            self.complete(outcome).await?;
        }
        self.flush().await?;
        Ok(self.store)
    }
}
