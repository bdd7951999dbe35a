//! Where a schedule reads the wall-clock time.

use std::fmt;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

/// The wall clock a cron schedule reads. Cron fire times are wall-clock times, which
/// `tokio::time::pause` does not move; a test gives a [`TokioClock`] instead of the
/// [`SystemClock`] so paused time drives the schedule.
pub trait WallClock: fmt::Debug + Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The operating system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A wall clock that starts at a given time and then follows tokio's clock, so that
/// `tokio::time::pause`/`advance` move it.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use camel_components::schedule::{TokioClock, WallClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
/// let clock = TokioClock::starting_at(start);
/// tokio::time::sleep(Duration::from_secs(5)).await;
/// assert_eq!(clock.now(), start + Duration::from_secs(5));
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    wall: SystemTime,
    mono: Instant,
}

impl TokioClock {
    /// A clock that reads `wall` now.
    pub fn starting_at(wall: SystemTime) -> Self {
        TokioClock {
            wall,
            mono: Instant::now(),
        }
    }
}

impl WallClock for TokioClock {
    fn now(&self) -> SystemTime {
        self.wall + self.mono.elapsed()
    }
}

/// `clock`'s time as a chrono UTC time.
pub(crate) fn utc_now(clock: &dyn WallClock) -> DateTime<Utc> {
    DateTime::<Utc>::from(clock.now())
}

/// Milliseconds since the Unix epoch, as the timer headers carry them.
pub(crate) fn epoch_millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}
