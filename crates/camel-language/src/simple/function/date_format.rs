//! Java `SimpleDateFormat` patterns, compiled once and applied to milliseconds since the
//! epoch in a fixed UTC offset. Written here rather than pulled in: the letters are few,
//! and Java's rules (`yy` is two digits, `SSS` is milliseconds, `MMM` a month name,
//! weeks start on Sunday) do not match strftime-style crates one to one.

use crate::problem::Problem;

/// A pattern letter with its count, or literal text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Field(char, usize),
    Text(Box<str>),
}

const LETTERS: &str = "GyYMLwWDdFEuaHkKhmsSzZX";

/// Compiles a pattern found at byte `at`; an unknown letter or an unclosed quote is an
/// error there, as Java rejects them too.
pub(crate) fn compile(pattern: &str, at: usize) -> Result<Box<[Piece]>, Problem> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = pattern.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                chars.next();
                text.push('\'');
                continue;
            }
            let mut closed = false;
            while let Some((_, q)) = chars.next() {
                if q == '\'' {
                    if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                        chars.next();
                        text.push('\'');
                        continue;
                    }
                    closed = true;
                    break;
                }
                text.push(q);
            }
            if !closed {
                return Err(Problem::new(
                    at + i,
                    "unterminated quote in the date pattern",
                ));
            }
        } else if c.is_ascii_alphabetic() {
            if !LETTERS.contains(c) {
                return Err(Problem::new(
                    at + i,
                    format!("unknown date pattern letter `{c}`; quote literal text as '{c}'"),
                ));
            }
            let mut count = 1;
            while chars.peek().is_some_and(|&(_, n)| n == c) {
                chars.next();
                count += 1;
            }
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text).into()));
            }
            pieces.push(Piece::Field(c, count));
        } else {
            text.push(c);
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text.into()));
    }
    Ok(pieces.into_boxed_slice())
}

/// A calendar date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    /// 0 = Sunday.
    weekday: u32,
    /// 1-based.
    day_of_year: u32,
    hour: u32,
    minute: u32,
    second: u32,
    milli: u32,
}

fn days_to_civil(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn civil_to_days(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil(millis: i64) -> Civil {
    let days = millis.div_euclid(86_400_000);
    let ms = millis.rem_euclid(86_400_000);
    let (year, month, day) = days_to_civil(days);
    Civil {
        year,
        month,
        day,
        weekday: (days + 4).rem_euclid(7) as u32,
        day_of_year: (days - civil_to_days(year, 1, 1) + 1) as u32,
        hour: (ms / 3_600_000) as u32,
        minute: (ms / 60_000 % 60) as u32,
        second: (ms / 1000 % 60) as u32,
        milli: (ms % 1000) as u32,
    }
}

/// Java's week of year with US rules (weeks start on Sunday; week 1 holds January 1st),
/// and the year that week belongs to.
fn week_of_year(c: &Civil) -> (i64, u32) {
    let days = civil_to_days(c.year, c.month, c.day);
    let week_start = days - i64::from(c.weekday);
    if week_start + 6 >= civil_to_days(c.year + 1, 1, 1) {
        return (c.year + 1, 1);
    }
    let jan1_weekday = (civil_to_days(c.year, 1, 1) + 4).rem_euclid(7) as u32;
    (c.year, (c.day_of_year - 1 + jan1_weekday) / 7 + 1)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

fn pad(out: &mut String, n: i64, width: usize) {
    if n < 0 {
        out.push('-');
    }
    out.push_str(&format!("{:0width$}", n.unsigned_abs()));
}

fn name(out: &mut String, full: &str, count: usize) {
    if count >= 4 {
        out.push_str(full);
    } else {
        out.extend(full.chars().take(3));
    }
}

/// Formats `millis` (since the epoch) shifted by `offset_seconds`.
pub(crate) fn format(pieces: &[Piece], millis: i64, offset_seconds: i32) -> String {
    let c = civil(millis.saturating_add(i64::from(offset_seconds) * 1000));
    let mut out = String::new();
    for piece in pieces {
        let (letter, n) = match piece {
            Piece::Text(t) => {
                out.push_str(t);
                continue;
            }
            Piece::Field(letter, n) => (*letter, *n),
        };
        match letter {
            'G' => out.push_str(if c.year > 0 { "AD" } else { "BC" }),
            'y' | 'Y' => {
                let year = if letter == 'Y' {
                    week_of_year(&c).0
                } else {
                    c.year
                };
                if n == 2 {
                    pad(&mut out, year.rem_euclid(100), 2);
                } else {
                    pad(&mut out, year, n);
                }
            }
            'M' | 'L' if n >= 3 => name(&mut out, MONTHS[c.month as usize - 1], n),
            'M' | 'L' => pad(&mut out, c.month.into(), n),
            'w' => pad(&mut out, week_of_year(&c).1.into(), n),
            'W' => {
                let first = (c.weekday + 35 - (c.day - 1) % 7) % 7;
                pad(&mut out, ((c.day - 1 + first) / 7 + 1).into(), n)
            }
            'D' => pad(&mut out, c.day_of_year.into(), n),
            'd' => pad(&mut out, c.day.into(), n),
            'F' => pad(&mut out, ((c.day - 1) / 7 + 1).into(), n),
            'E' => name(&mut out, DAYS[c.weekday as usize], n),
            'u' => pad(
                &mut out,
                (if c.weekday == 0 { 7 } else { c.weekday }).into(),
                n,
            ),
            'a' => out.push_str(if c.hour < 12 { "AM" } else { "PM" }),
            'H' => pad(&mut out, c.hour.into(), n),
            'k' => pad(&mut out, (if c.hour == 0 { 24 } else { c.hour }).into(), n),
            'K' => pad(&mut out, (c.hour % 12).into(), n),
            'h' => pad(
                &mut out,
                (if c.hour.is_multiple_of(12) {
                    12
                } else {
                    c.hour % 12
                })
                .into(),
                n,
            ),
            'm' => pad(&mut out, c.minute.into(), n),
            's' => pad(&mut out, c.second.into(), n),
            'S' => pad(&mut out, c.milli.into(), n),
            'z' => out.push_str(&zone_name(offset_seconds)),
            'Z' => out.push_str(&zone_offset(offset_seconds, false, false)),
            _ => {
                // 'X': ISO 8601, `Z` for UTC.
                if offset_seconds == 0 {
                    out.push('Z');
                } else {
                    out.push_str(&zone_offset(offset_seconds, n == 3, n == 1));
                }
            }
        }
    }
    out
}

fn zone_offset(seconds: i32, colon: bool, hours_only: bool) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    let (h, m) = (minutes / 60, minutes % 60);
    match (hours_only, colon) {
        (true, _) => format!("{sign}{h:02}"),
        (false, true) => format!("{sign}{h:02}:{m:02}"),
        (false, false) => format!("{sign}{h:02}{m:02}"),
    }
}

fn zone_name(seconds: i32) -> String {
    if seconds == 0 {
        "UTC".into()
    } else {
        format!("GMT{}", zone_offset(seconds, true, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2024-02-29T13:05:09.007Z, a Thursday.
    const LEAP_DAY: i64 = 1_709_211_909_007;

    fn fmt(pattern: &str, millis: i64, offset: i32) -> String {
        format(&compile(pattern, 0).unwrap(), millis, offset)
    }

    #[test]
    fn fields_follow_simple_date_format() {
        assert_eq!(
            fmt("yyyy-MM-dd'T'HH:mm:ss.SSS", LEAP_DAY, 0),
            "2024-02-29T13:05:09.007"
        );
        assert_eq!(fmt("yy/M/d h:m:s a", LEAP_DAY, 0), "24/2/29 1:5:9 PM");
        assert_eq!(fmt("EEE, d MMM yyyy", LEAP_DAY, 0), "Thu, 29 Feb 2024");
        assert_eq!(fmt("EEEE MMMM D u", LEAP_DAY, 0), "Thursday February 60 4");
        assert_eq!(fmt("'o''clock' ''", LEAP_DAY, 0), "o'clock '");
        assert_eq!(fmt("Z X XXX z", LEAP_DAY, 0), "+0000 Z Z UTC");
        assert_eq!(
            fmt("HH Z XXX z", LEAP_DAY, 8 * 3600),
            "21 +0800 +08:00 GMT+08:00"
        );
        assert_eq!(fmt("yyyy-MM-dd HH", LEAP_DAY, -14 * 3600), "2024-02-28 23");
    }

    #[test]
    fn weeks_follow_us_rules() {
        // 2024-12-30 (Monday) is in week 1 of 2025; 2024-01-06 (Saturday) in week 1.
        let dec30 = civil_to_days(2024, 12, 30) * 86_400_000;
        assert_eq!(fmt("w Y y", dec30, 0), "1 2025 2024");
        let jan6 = civil_to_days(2024, 1, 6) * 86_400_000;
        assert_eq!(fmt("w W F", jan6, 0), "1 1 1");
        let jan7 = civil_to_days(2024, 1, 7) * 86_400_000;
        assert_eq!(fmt("w W", jan7, 0), "2 2");
    }

    #[test]
    fn civil_round_trips() {
        for days in [-719_468, -1, 0, 59, 19_000, 2_932_896] {
            let (y, m, d) = days_to_civil(days);
            assert_eq!(civil_to_days(y, m, d), days);
        }
        assert_eq!(civil(0).weekday, 4);
    }

    proptest::proptest! {
        #[test]
        fn any_instant_formats_and_its_date_round_trips(
            millis in proptest::prelude::any::<i64>(),
            offset in -64_800i32..=64_800,
        ) {
            let all = compile("G yy yyyy Y MMMM L w W D d F EEEE u a H k K h m s SSS z Z X XXX", 0).unwrap();
            let _ = format(&all, millis, offset);
            let c = civil(millis);
            let days = millis.div_euclid(86_400_000);
            proptest::prop_assert_eq!(civil_to_days(c.year, c.month, c.day), days);
            proptest::prop_assert!((1..=366).contains(&c.day_of_year));
        }
    }

    #[test]
    fn bad_patterns_are_located() {
        assert_eq!(compile("yyyy-bb", 10).unwrap_err().at, 15);
        assert_eq!(compile("HH 'x", 0).unwrap_err().at, 3);
    }
}
