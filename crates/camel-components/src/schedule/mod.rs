//! Cron scheduling: `cron:NAME?schedule=…` and `quartz:GROUP/NAME?cron=…`.
//!
//! Both are route sources that fire on a Quartz-style cron expression
//! ([`CronExpression`]): six or seven fields, seconds first, `+` for a space in a URI
//! (`cron:` also takes five, seconds left out, as Camel's cron endpoint does).
//! Each firing sends one exchange with an empty body through the route, one at a time:
//! a firing waits for the previous exchange to finish, and firings missed meanwhile (a
//! slow exchange, a suspended route) are folded into one that fires at once.
//! Expressions are read in UTC unless a fixed-offset time zone is given.
//!
//! Each exchange carries the headers `fireTime` and `scheduledFireTime` (milliseconds
//! since the Unix epoch), `previousFireTime` and `nextFireTime` when there is one, and
//! `triggerName` / `triggerGroup`, as Camel's Quartz consumer sets them.
//!
//! ```
//! use camel_api::{Component, EndpointUri};
//! use camel_components::{BareContext, CronComponent, QuartzComponent};
//!
//! let cron = CronComponent::new();
//! let uri = EndpointUri::parse("cron:tick?schedule=0/2+*+*+*+*+?").unwrap();
//! assert!(cron.endpoint(uri, &BareContext).is_ok());
//!
//! let quartz = QuartzComponent::new();
//! let uri = EndpointUri::parse("quartz:reports/nightly?cron=0+0+2+*+*+?").unwrap();
//! assert!(quartz.endpoint(uri, &BareContext).is_ok());
//!
//! // Camel's cron endpoint also takes five fields, without the seconds.
//! let uri = EndpointUri::parse("cron:tick?schedule=0/2+*+*+*+?").unwrap();
//! assert!(cron.endpoint(uri, &BareContext).is_ok());
//! let uri = EndpointUri::parse("cron:tick?schedule=0+0+12+*").unwrap();
//! let err = cron.endpoint(uri, &BareContext).unwrap_err().to_string();
//! assert!(err.contains("`schedule`") && err.contains("6 or 7 fields"), "{err}");
//! ```

mod clock;
mod component;
mod consumer;
mod expression;

pub use clock::{SystemClock, TokioClock, WallClock};
pub use component::{CronComponent, QuartzComponent};
pub(crate) use consumer::sleep_until;
pub(crate) use expression::parse_zone as parse_zone_option;
pub use expression::CronExpression;

/// Why a schedule could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// The cron expression does not parse.
    #[error("invalid cron expression `{expression}`: {reason}")]
    InvalidCron {
        /// The expression, with `+` read as spaces.
        expression: String,
        /// What is wrong.
        reason: String,
    },
    /// A time zone other than UTC or a fixed offset.
    #[error(
        "time zone `{zone}` is not supported: use UTC or a fixed offset such as +01:00 \
         (named zones with daylight saving are not available)"
    )]
    UnsupportedTimeZone {
        /// The zone as given.
        zone: String,
    },
}

#[cfg(test)]
mod tests;
