//! The redelivery policy: a pure decision (may we try again, how long to wait), tested
//! without a clock.

use std::time::Duration;

use crate::config::RedeliveryPolicyConfig;

/// A log level of the error handler's lines; `Off` logs nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    /// Not logged.
    Off,
    /// `trace`.
    Trace,
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
}

impl LogLevel {
    /// Reads Camel's names (`DEBUG`, `WARN`, `OFF`, any case).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "off" => LogLevel::Off,
            "trace" => LogLevel::Trace,
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "warn" => LogLevel::Warn,
            "error" => LogLevel::Error,
            _ => return None,
        })
    }
}

/// Camel's redelivery policy, resolved with its defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RedeliveryPolicy {
    /// Redeliveries after the first failure; negative: forever.
    pub maximum_redeliveries: i64,
    /// The first delay.
    pub redelivery_delay: Duration,
    /// The longest delay (zero: no cap).
    pub maximum_redelivery_delay: Duration,
    /// The back-off factor.
    pub back_off_multiplier: f64,
    /// Whether delays grow by `back_off_multiplier`.
    pub use_exponential_back_off: bool,
    /// Whether delays vary randomly.
    pub use_collision_avoidance: bool,
    /// How much they vary (a fraction of the delay).
    pub collision_avoidance_factor: f64,
    /// `(from redelivery n, wait)`, ascending; when set it replaces the computed delays.
    pub delay_pattern: Vec<(u32, Duration)>,
    /// Level of the line logged per redelivery.
    pub retry_attempted_log_level: LogLevel,
    /// Only every n-th redelivery logs its line (at least 1).
    pub retry_attempted_log_interval: u32,
    /// Level of the line logged when exhausted.
    pub retries_exhausted_log_level: LogLevel,
    /// Whether the exhausted line carries the error chain.
    pub log_stack_trace: bool,
}

impl Default for RedeliveryPolicy {
    /// Camel's defaults: no redelivery, 1 s delay, ×2 back-off when enabled, 60 s cap.
    fn default() -> Self {
        RedeliveryPolicy {
            maximum_redeliveries: 0,
            redelivery_delay: Duration::from_millis(1000),
            maximum_redelivery_delay: Duration::from_millis(60_000),
            back_off_multiplier: 2.0,
            use_exponential_back_off: false,
            use_collision_avoidance: false,
            collision_avoidance_factor: 0.15,
            delay_pattern: Vec::new(),
            retry_attempted_log_level: LogLevel::Debug,
            retry_attempted_log_interval: 1,
            retries_exhausted_log_level: LogLevel::Error,
            log_stack_trace: true,
        }
    }
}

impl RedeliveryPolicy {
    /// `base` with the options `config` sets; an error names the bad option.
    pub fn from_config(
        base: &RedeliveryPolicy,
        config: &RedeliveryPolicyConfig,
    ) -> Result<Self, (&'static str, String)> {
        let mut p = base.clone();
        if let Some(v) = config.maximum_redeliveries {
            p.maximum_redeliveries = v;
        }
        if let Some(v) = config.redelivery_delay {
            p.redelivery_delay = Duration::from_millis(v);
        }
        if let Some(v) = config.maximum_redelivery_delay {
            p.maximum_redelivery_delay = Duration::from_millis(v);
        }
        if let Some(v) = config.back_off_multiplier {
            if !(v.is_finite() && v >= 1.0) {
                return Err(("back_off_multiplier", format!("{v} is not a number ≥ 1")));
            }
            p.back_off_multiplier = v;
        }
        if let Some(v) = config.use_exponential_back_off {
            p.use_exponential_back_off = v;
        }
        if let Some(v) = config.use_collision_avoidance {
            p.use_collision_avoidance = v;
        }
        if let Some(v) = config.collision_avoidance_factor {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err((
                    "collision_avoidance_factor",
                    format!("{v} is not between 0 and 1"),
                ));
            }
            p.collision_avoidance_factor = v;
        }
        if let Some(text) = &config.delay_pattern {
            p.delay_pattern = parse_delay_pattern(text).map_err(|m| ("delay_pattern", m))?;
        }
        let level = |name: &'static str, v: &Option<String>, into: &mut LogLevel| match v {
            None => Ok(()),
            Some(t) => match LogLevel::parse(t) {
                Some(l) => {
                    *into = l;
                    Ok(())
                }
                None => Err((
                    name,
                    format!("unknown level `{t}` (TRACE, DEBUG, INFO, WARN, ERROR, OFF)"),
                )),
            },
        };
        level(
            "retry_attempted_log_level",
            &config.retry_attempted_log_level,
            &mut p.retry_attempted_log_level,
        )?;
        level(
            "retries_exhausted_log_level",
            &config.retries_exhausted_log_level,
            &mut p.retries_exhausted_log_level,
        )?;
        if config.log_retry_attempted == Some(false) {
            p.retry_attempted_log_level = LogLevel::Off;
        }
        if let Some(n) = config.retry_attempted_log_interval {
            if n == 0 {
                return Err((
                    "retry_attempted_log_interval",
                    "0 is not a number of attempts ≥ 1".into(),
                ));
            }
            p.retry_attempted_log_interval = n;
        }
        if config.log_exhausted == Some(false) {
            p.retries_exhausted_log_level = LogLevel::Off;
        }
        if let Some(v) = config.log_stack_trace {
            p.log_stack_trace = v;
        }
        Ok(p)
    }

    /// True when redelivery number `next` (1-based) is allowed.
    pub fn allows(&self, next: u32) -> bool {
        self.maximum_redeliveries < 0 || i64::from(next) <= self.maximum_redeliveries
    }

    /// The wait before redelivery number `n` (1-based); `random` is a draw in `[0, 1)`
    /// used only with collision avoidance, `sign_up` its direction.
    ///
    /// Unlike Camel, the random variance does not compound: delay `n` is computed from
    /// the configured delay, so the bounds are exact (`d·(1 ± factor)`, then capped).
    pub fn delay(&self, n: u32, random: f64, sign_up: bool) -> Duration {
        if !self.delay_pattern.is_empty() {
            return self
                .delay_pattern
                .iter()
                .rev()
                .find(|(from, _)| n >= *from)
                .map(|(_, d)| *d)
                .unwrap_or(Duration::ZERO);
        }
        let mut ms = self.redelivery_delay.as_millis() as f64;
        if self.use_exponential_back_off && self.back_off_multiplier > 1.0 {
            let cap = self.cap_ms();
            for _ in 1..n {
                ms = (ms * self.back_off_multiplier).round();
                if ms >= cap {
                    break;
                }
            }
        }
        if self.use_collision_avoidance {
            let variance = self.collision_avoidance_factor * random.clamp(0.0, 1.0);
            ms += if sign_up {
                ms * variance
            } else {
                -ms * variance
            };
        }
        let ms = ms.clamp(0.0, self.cap_ms());
        Duration::from_millis(ms.round() as u64)
    }

    fn cap_ms(&self) -> f64 {
        if self.maximum_redelivery_delay.is_zero() {
            f64::MAX
        } else {
            self.maximum_redelivery_delay.as_millis() as f64
        }
    }
}

/// Reads `"1:1000;5:5000"` into ascending `(from, wait)` pairs.
pub fn parse_delay_pattern(text: &str) -> Result<Vec<(u32, Duration)>, String> {
    let mut out: Vec<(u32, Duration)> = Vec::new();
    for group in text.split(';').map(str::trim).filter(|g| !g.is_empty()) {
        let (from, wait) = group
            .split_once(':')
            .ok_or_else(|| format!("`{group}` is not `redelivery:delay`"))?;
        let from: u32 = from
            .trim()
            .parse()
            .map_err(|_| format!("`{from}` is not a redelivery number"))?;
        let wait: u64 = wait
            .trim()
            .parse()
            .map_err(|_| format!("`{wait}` is not a delay in milliseconds"))?;
        if out.last().is_some_and(|(prev, _)| *prev >= from) {
            return Err(format!("`{group}`: redelivery numbers must ascend"));
        }
        out.push((from, Duration::from_millis(wait)));
    }
    if out.is_empty() {
        return Err("an empty delay pattern".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn exponential_back_off_is_capped() {
        let p = RedeliveryPolicy {
            maximum_redeliveries: 6,
            redelivery_delay: ms(100),
            maximum_redelivery_delay: ms(1000),
            use_exponential_back_off: true,
            ..Default::default()
        };
        let delays: Vec<_> = (1..=6).map(|n| p.delay(n, 0.0, true)).collect();
        assert_eq!(
            delays,
            [ms(100), ms(200), ms(400), ms(800), ms(1000), ms(1000)]
        );
        assert!(p.allows(6));
        assert!(!p.allows(7));
    }

    #[test]
    fn forever_allows_any_number() {
        let p = RedeliveryPolicy {
            maximum_redeliveries: -1,
            ..Default::default()
        };
        assert!(p.allows(u32::MAX));
        assert!(!RedeliveryPolicy::default().allows(1));
    }

    #[test]
    fn collision_avoidance_stays_within_its_factor() {
        let p = RedeliveryPolicy {
            redelivery_delay: ms(1000),
            use_collision_avoidance: true,
            ..Default::default()
        };
        assert_eq!(p.delay(1, 1.0, true), ms(1150));
        assert_eq!(p.delay(1, 1.0, false), ms(850));
        assert_eq!(p.delay(1, 0.5, true), ms(1075));
        for i in 0..100 {
            let d = p.delay(1, f64::from(i) / 100.0, i % 2 == 0);
            assert!(d >= ms(850) && d <= ms(1150), "{d:?}");
        }
    }

    #[test]
    fn delay_pattern_picks_the_last_group_reached() {
        let p = RedeliveryPolicy {
            delay_pattern: parse_delay_pattern("1:100; 3:1000;5:5000").unwrap(),
            ..Default::default()
        };
        let delays: Vec<_> = (1..=6).map(|n| p.delay(n, 0.0, true)).collect();
        assert_eq!(
            delays,
            [ms(100), ms(100), ms(1000), ms(1000), ms(5000), ms(5000)]
        );
        assert!(parse_delay_pattern("3:1;1:2").is_err());
        assert!(parse_delay_pattern("x").is_err());
        assert!(parse_delay_pattern("").is_err());
    }

    #[test]
    fn config_overrides_the_base_and_refuses_nonsense() {
        let c: RedeliveryPolicyConfig = serde_json::from_value(serde_json::json!({
            "maximumRedeliveries": "3", "redeliveryDelay": "2s", "useExponentialBackOff": "true",
            "retryAttemptedLogLevel": "WARN", "logExhausted": false,
        }))
        .unwrap();
        let p = RedeliveryPolicy::from_config(&RedeliveryPolicy::default(), &c).unwrap();
        assert_eq!(p.maximum_redeliveries, 3);
        assert_eq!(p.redelivery_delay, ms(2000));
        assert!(p.use_exponential_back_off);
        assert_eq!(p.retry_attempted_log_level, LogLevel::Warn);
        assert_eq!(p.retries_exhausted_log_level, LogLevel::Off);
        let bad = RedeliveryPolicyConfig {
            back_off_multiplier: Some(0.5),
            ..Default::default()
        };
        assert_eq!(
            RedeliveryPolicy::from_config(&p, &bad).unwrap_err().0,
            "back_off_multiplier"
        );
    }
}
