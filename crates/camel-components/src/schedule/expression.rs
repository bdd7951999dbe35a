//! Quartz-style cron expressions, as Camel's `cron:` and `quartz:` endpoints take them.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, FixedOffset, Utc};
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

use super::ScheduleError;

/// A parsed cron expression with the time zone it is read in.
///
/// Six or seven fields, seconds first, as Quartz writes them:
/// `second minute hour day-of-month month day-of-week [year]`. Day-of-week counts
/// `1 = SUN … 7 = SAT` (or `MON`-`SUN` by name); `?` means "no constraint" in the day
/// fields, and `L`, `W`, `#` work as in Quartz. Because a URI cannot hold a space, `+`
/// stands for one (`0/2+*+*+*+*+?`).
///
/// ```
/// use camel_components::schedule::CronExpression;
///
/// let every_two_seconds: CronExpression = "0/2+*+*+*+*+?".parse().unwrap();
/// assert_eq!(every_two_seconds.to_string(), "0/2 * * * * ? (UTC)");
/// let err = "0 0 12 * *".parse::<CronExpression>().unwrap_err();
/// assert!(err.to_string().contains("6 or 7 fields"), "{err}");
/// ```
#[derive(Clone, Debug)]
pub struct CronExpression {
    text: String,
    cron: Cron,
    zone: FixedOffset,
}

impl CronExpression {
    /// Parses `text` (with `+` for spaces), read in UTC.
    pub fn parse(text: &str) -> Result<Self, ScheduleError> {
        let text = text.replace('+', " ");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let invalid = |reason: String| ScheduleError::InvalidCron {
            expression: text.clone(),
            reason,
        };
        let fields: Vec<&str> = text.split(' ').filter(|f| !f.is_empty()).collect();
        if !(6..=7).contains(&fields.len()) {
            return Err(invalid(format!(
                "it has {} field(s); a cron expression here has 6 or 7 fields, seconds first \
                 (`second minute hour day-of-month month day-of-week [year]`, e.g. `0/2 * * * * ?`)",
                fields.len()
            )));
        }
        let restricted = |f: &str| f != "?" && f != "*";
        if restricted(fields[3]) && restricted(fields[5]) {
            // Quartz refuses this too; croner would silently OR the two day fields.
            return Err(invalid(
                "day-of-month and day-of-week are both set; put `?` in one of them".to_string(),
            ));
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Required)
            .year(Year::Optional)
            // Quartz numbers weekdays 1 = SUN … 7 = SAT and writes `0/5` for `*/5`.
            .alternative_weekdays(true)
            .sloppy_ranges(true)
            .build();
        let cron = parser.parse(&text).map_err(|e| invalid(e.to_string()))?;
        Ok(CronExpression {
            text,
            cron,
            zone: utc(),
        })
    }

    /// The same expression read in `zone`.
    pub fn in_zone(mut self, zone: FixedOffset) -> Self {
        self.zone = zone;
        self
    }

    /// The expression, with spaces.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first firing strictly after `instant`, or `None` when the schedule has no more
    /// (a past year, an impossible date).
    pub fn next_after(&self, instant: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = instant.with_timezone(&self.zone);
        self.cron
            .find_next_occurrence(&local, false)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// The last firing at or before `instant`, if any.
    pub fn last_at_or_before(&self, instant: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = instant.with_timezone(&self.zone);
        self.cron
            .find_previous_occurrence(&local, true)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }
}

impl FromStr for CronExpression {
    type Err = ScheduleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        CronExpression::parse(text)
    }
}

impl fmt::Display for CronExpression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.zone == utc() {
            write!(f, "{} (UTC)", self.text)
        } else {
            write!(f, "{} ({})", self.text, self.zone)
        }
    }
}

fn utc() -> FixedOffset {
    FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!("zero is a valid offset"))
}

/// Parses a time zone: `UTC` (also `GMT`, `Z`, `Etc/UTC`) or a fixed offset (`+01:00`,
/// `-0530`, `+02`, `UTC+1`). Named zones with daylight saving are refused.
pub(crate) fn parse_zone(text: &str) -> Result<FixedOffset, ScheduleError> {
    let t = text.trim();
    let unsupported = || ScheduleError::UnsupportedTimeZone {
        zone: t.to_string(),
    };
    let upper = t.to_ascii_uppercase();
    let offset = ["ETC/UTC", "ETC/GMT", "UTC", "GMT", "Z"]
        .iter()
        .find_map(|p| upper.strip_prefix(p))
        .unwrap_or(&upper);
    if offset.is_empty() {
        return Ok(utc());
    }
    let (sign, digits) = match offset.as_bytes()[0] {
        b'+' => (1, &offset[1..]),
        b'-' => (-1, &offset[1..]),
        _ => return Err(unsupported()),
    };
    let digits = digits.replace(':', "");
    if digits.is_empty() || digits.len() > 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(unsupported());
    }
    let (hours, minutes) = if digits.len() <= 2 {
        (digits.as_str(), "0")
    } else {
        digits.split_at(digits.len() - 2)
    };
    let hours: i32 = hours.parse().map_err(|_| unsupported())?;
    let minutes: i32 = minutes.parse().map_err(|_| unsupported())?;
    if hours > 18 || minutes > 59 {
        return Err(unsupported());
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60)).ok_or_else(unsupported)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, h, m, s).unwrap() // a Monday
    }

    #[test]
    fn every_two_seconds_with_plus_for_spaces() {
        let e = CronExpression::parse("0/2+*+*+*+*+?").unwrap();
        assert_eq!(e.next_after(at(10, 0, 0)), Some(at(10, 0, 2)));
        assert_eq!(e.next_after(at(10, 0, 1)), Some(at(10, 0, 2)));
        assert_eq!(e.last_at_or_before(at(10, 0, 5)), Some(at(10, 0, 4)));
    }

    #[test]
    fn quartz_weekdays_and_a_seventh_year_field() {
        // Noon on weekdays: from Monday 13:00 the next is Tuesday noon.
        let e = CronExpression::parse("0 0 12 ? * MON-FRI").unwrap();
        let tuesday_noon = Utc.with_ymd_and_hms(2026, 3, 3, 12, 0, 0).unwrap();
        assert_eq!(e.next_after(at(13, 0, 0)), Some(tuesday_noon));
        // Quartz's 2 is Monday.
        let e = CronExpression::parse("0 0 12 ? * 2 2026").unwrap();
        assert_eq!(e.next_after(at(11, 0, 0)), Some(at(12, 0, 0)));
        let e = CronExpression::parse("0 0 12 ? * 2 2025").unwrap();
        assert_eq!(e.next_after(at(11, 0, 0)), None);
    }

    #[test]
    fn a_fixed_offset_moves_the_wall_clock() {
        let e = CronExpression::parse("0 0 12 * * ?")
            .unwrap()
            .in_zone(parse_zone("+02:00").unwrap());
        assert_eq!(e.next_after(at(0, 0, 0)), Some(at(10, 0, 0)));
    }

    #[test]
    fn bad_expressions_say_why() {
        let cases = [
            ("* * * * *", "6 or 7 fields"),
            ("0 0 12 1 * MON", "put `?` in one of them"),
            ("0 61 * * * ?", "0 61 * * * ?"),
            ("0 0 12 ? * FOO", "FOO"),
        ];
        for (text, needle) in cases {
            let err = CronExpression::parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn zones() {
        assert_eq!(parse_zone("UTC").unwrap(), utc());
        assert_eq!(parse_zone("Etc/GMT").unwrap(), utc());
        assert_eq!(parse_zone("-0530").unwrap().local_minus_utc(), -19800);
        assert_eq!(parse_zone("UTC+1").unwrap().local_minus_utc(), 3600);
        let err = parse_zone("Europe/Stockholm").unwrap_err().to_string();
        assert!(err.contains("Europe/Stockholm"), "{err}");
        assert!(parse_zone("+25:00").is_err());
    }
}
