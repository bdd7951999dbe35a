//! Retry delays after a failed delivery: exponential between a floor and a ceiling, with
//! jitter so that many groups failing together (a destination outage) do not all retry in
//! the same instant.

use std::time::Duration;

use rand::Rng;

/// Exponential backoff with jitter in the upper half of each step, never outside
/// `[min, max]`.
///
/// Attempt 1 waits `min`, attempt 2 about `2 × min`, … never more than `max`. With
/// `jitter` the delay is drawn uniformly from `[max(d / 2, min), d]`, where `d` is the
/// exponential step; without it the delay is exactly `d`. So the first retry is never
/// earlier than `min`, whatever the draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Delay after the first failure (default 1 s).
    pub min: Duration,
    /// Ceiling of the delay (default 60 s).
    pub max: Duration,
    /// Whether to randomise each delay (default true).
    pub jitter: bool,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            min: Duration::from_secs(1),
            max: Duration::from_secs(60),
            jitter: true,
        }
    }
}

impl Backoff {
    /// The delay before the next try of a message that has failed `attempts` times
    /// (1 after the first failure).
    pub fn delay(&self, attempts: u32) -> Duration {
        let exponent = attempts.saturating_sub(1).min(32);
        let step = self
            .min
            .checked_mul(1u32 << exponent.min(31))
            .unwrap_or(self.max)
            .min(self.max)
            .max(self.min);
        if !self.jitter || step.is_zero() {
            return step;
        }
        let floor = (step / 2).max(self.min);
        let spread = (step - floor).as_micros() as u64;
        floor + Duration::from_micros(rand::thread_rng().gen_range(0..=spread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_ceiling_without_jitter() {
        let b = Backoff {
            jitter: false,
            ..Backoff::default()
        };
        assert_eq!(b.delay(1), Duration::from_secs(1));
        assert_eq!(b.delay(2), Duration::from_secs(2));
        assert_eq!(b.delay(4), Duration::from_secs(8));
        assert_eq!(b.delay(7), Duration::from_secs(60));
        assert_eq!(b.delay(1000), Duration::from_secs(60));
    }

    #[test]
    fn jitter_stays_in_the_upper_half_of_the_step() {
        let b = Backoff::default();
        for attempt in 1..12 {
            let step = Backoff { jitter: false, ..b }.delay(attempt);
            let d = b.delay(attempt);
            assert!(
                d <= step && d >= step / 2 && d >= b.min && d <= b.max,
                "attempt {attempt}: {d:?} vs {step:?}"
            );
        }
    }

    #[test]
    fn jitter_never_retries_before_the_floor() {
        // The spec's bounds are the delays' bounds: with a 300 ms floor a first retry
        // came after 280 ms when jitter drew from [d/2, d].
        let b = Backoff {
            min: Duration::from_millis(300),
            max: Duration::from_secs(2),
            jitter: true,
        };
        for _ in 0..2_000 {
            let d = b.delay(1);
            assert_eq!(
                d,
                Duration::from_millis(300),
                "attempt 1 has no room to jitter"
            );
            let d = b.delay(2);
            assert!(
                d >= Duration::from_millis(300) && d <= Duration::from_millis(600),
                "{d:?}"
            );
        }
    }
}
