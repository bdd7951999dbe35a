//! `${date:COMMAND}`, `${date:COMMAND:PATTERN}` and
//! `${date-with-timezone:COMMAND:ZONE:PATTERN}`.
//!
//! COMMAND is `now`, `millis`, `header.NAME`, `exchangeProperty.NAME` or `file` (the
//! file consumer's `CamelFileLastModified`), optionally shifted: `now-24h`,
//! `header.due+1h30m`, `now+100` (milliseconds). A header or property holds
//! milliseconds since the epoch. Zones are fixed offsets; the default is UTC.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use camel_api::{CamelError, Exchange, Value};

use super::date_format::{self, Piece};
use crate::problem::Problem;

/// Where the instant comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    Now,
    Header(Arc<str>),
    Property(Arc<str>),
}

/// A resolved date function.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DateFunction {
    source: Source,
    shift_millis: i64,
    offset_seconds: i32,
    output: Output,
}

#[derive(Debug, Clone, PartialEq)]
enum Output {
    /// `${date:millis}`: the number.
    Millis,
    Pattern(Box<[Piece]>),
}

/// What `${date:now}` prints without a pattern: ISO 8601, where Camel yields a Java
/// `Date` object.
const ISO: &str = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX";

/// `rest` follows `date:` (or `date-with-timezone:` when `with_zone`), at byte `at`.
pub(crate) fn parse(rest: &str, at: usize, with_zone: bool) -> Result<DateFunction, Problem> {
    let (command, after) = match rest.find(':') {
        Some(i) => (&rest[..i], Some((&rest[i + 1..], at + i + 1))),
        None => (rest, None),
    };
    let (offset_seconds, pattern) = match (with_zone, after) {
        (false, p) => (0, p),
        (true, Some((zoned, zone_at))) => {
            let Some(i) = zoned.find(':') else {
                return Err(Problem::new(
                    zone_at,
                    "missing `:PATTERN` after the time zone",
                ));
            };
            (
                parse_zone(&zoned[..i], zone_at)?,
                Some((&zoned[i + 1..], zone_at + i + 1)),
            )
        }
        (true, None) => {
            return Err(Problem::new(
                at + rest.len(),
                "missing `:ZONE:PATTERN` after the command",
            ))
        }
    };
    let (base, shift_millis) = split_shift(command, at)?;
    let source = match base {
        "now" | "millis" => Source::Now,
        "file" => Source::Header(super::file::LAST_MODIFIED.into()),
        "exchangeCreated" => {
            return Err(Problem::new(
                at,
                "`date:exchangeCreated` is not supported yet: exchanges do not record when they \
                 were created; use `now` or a header set by the consumer",
            ))
        }
        _ => {
            if let Some(name) = base
                .strip_prefix("header.")
                .or(base.strip_prefix("in.header."))
            {
                Source::Header(name.into())
            } else if let Some(name) = base.strip_prefix("exchangeProperty.") {
                Source::Property(name.into())
            } else if base.starts_with("variable.") {
                return Err(Problem::new(
                    at,
                    "`date:variable.NAME` is not supported yet; copy the variable into a header first",
                ));
            } else {
                return Err(Problem::new(
                    at,
                    format!(
                        "unknown date command `{base}`; use now, millis, header.NAME, \
                         exchangeProperty.NAME or file"
                    ),
                ));
            }
        }
    };
    let output = match pattern {
        Some((p, p_at)) if !p.is_empty() => Output::Pattern(date_format::compile(p, p_at)?),
        _ if base == "millis" => Output::Millis,
        _ => Output::Pattern(date_format::compile(ISO, 0)?),
    };
    Ok(DateFunction {
        source,
        shift_millis,
        offset_seconds,
        output,
    })
}

/// Splits `header.x+1h30m-100` into `header.x` and the shift in milliseconds. The shift
/// is the longest run of `+N[hms]`/`-N[hms]` groups at the end, so a name such as
/// `Content-Length` stays whole.
fn split_shift(command: &str, at: usize) -> Result<(&str, i64), Problem> {
    let mut start = command.len();
    // Walk back over the characters a shift may hold, then forward to the first sign.
    let tail_start = command
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || matches!(c, '+' | '-' | 'h' | 'm' | 's'))
        .last()
        .map_or(command.len(), |(i, _)| i);
    if let Some(sign) = command[tail_start..].find(['+', '-']) {
        start = tail_start + sign;
    }
    let (base, shift) = command.split_at(start);
    let mut total = 0i64;
    let mut number = String::new();
    let mut sign = 1i64;
    let mut unit_seen = true;
    for c in shift.chars() {
        match c {
            '+' | '-' => {
                total += sign * number.parse::<i64>().unwrap_or(0);
                number.clear();
                sign = if c == '-' { -1 } else { 1 };
                unit_seen = false;
            }
            '0'..='9' => {
                number.push(c);
                unit_seen = false;
            }
            'h' | 'm' | 's' if !number.is_empty() => {
                let scale = match c {
                    'h' => 3_600_000,
                    'm' => 60_000,
                    _ => 1000,
                };
                let n: i64 = number
                    .parse()
                    .map_err(|_| Problem::new(at + start, "date shift too large"))?;
                total += sign * n * scale;
                number.clear();
                unit_seen = true;
            }
            _ => {
                return Err(Problem::new(
                    at + start,
                    format!("bad date shift `{shift}`"),
                ))
            }
        }
    }
    if !unit_seen && number.is_empty() && !shift.is_empty() {
        return Err(Problem::new(
            at + start,
            format!("bad date shift `{shift}`"),
        ));
    }
    total += sign * number.parse::<i64>().unwrap_or(0);
    Ok((base, total))
}

/// `UTC`, `GMT`, `Z`, `GMT+8`, `UTC-05:30`, `+0100`: a fixed offset in seconds.
fn parse_zone(zone: &str, at: usize) -> Result<i32, Problem> {
    let rest = ["GMT", "UTC", "Z"]
        .iter()
        .find_map(|p| zone.strip_prefix(p))
        .unwrap_or(zone);
    if rest.is_empty() {
        return Ok(0);
    }
    let parsed = (|| {
        let (sign, digits) = match rest.as_bytes().first()? {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => return None,
        };
        let (h, m) = match digits.split_once(':') {
            Some((h, m)) => (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?),
            None if !digits.is_ascii() => return None,
            None if digits.len() > 2 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
            None => (digits.parse().ok()?, 0),
        };
        (h <= 18 && m < 60).then_some(sign * (h * 3600 + m * 60))
    })();
    parsed.ok_or_else(|| {
        Problem::new(
            at,
            format!(
                "time zone `{zone}` is not supported: use a fixed offset such as UTC, GMT+8 or \
                 GMT-05:30 (named zones need a zone database this build does not carry)"
            ),
        )
    })
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl DateFunction {
    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let base = match &self.source {
            Source::Now => now_millis(),
            Source::Header(name) => match instant(exchange.header(name), name)? {
                Some(ms) => ms,
                None => return Ok(Value::Null),
            },
            Source::Property(name) => match instant(exchange.property(name), name)? {
                Some(ms) => ms,
                None => return Ok(Value::Null),
            },
        };
        let millis = base.saturating_add(self.shift_millis);
        Ok(match &self.output {
            Output::Millis => Value::Int(millis),
            Output::Pattern(p) => {
                Value::Text(date_format::format(p, millis, self.offset_seconds).into())
            }
        })
    }
}

fn instant(value: Option<&Value>, name: &str) -> Result<Option<i64>, CamelError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_utf8_text().and_then(|t| t.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| {
                CamelError::conversion(
                    "date",
                    format!("`{name}` holds `{v}`, not milliseconds since the epoch"),
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_are_read_from_the_end() {
        assert_eq!(split_shift("now-24h", 0).unwrap(), ("now", -86_400_000));
        assert_eq!(
            split_shift("now+1h30m-100", 0).unwrap(),
            ("now", 5_400_000 - 100)
        );
        assert_eq!(
            split_shift("header.Content-Length", 0).unwrap(),
            ("header.Content-Length", 0)
        );
        assert_eq!(
            split_shift("header.due+10s", 0).unwrap(),
            ("header.due", 10_000)
        );
    }

    #[test]
    fn zones_are_fixed_offsets() {
        assert_eq!(parse_zone("UTC", 0), Ok(0));
        assert_eq!(parse_zone("GMT+8", 0), Ok(8 * 3600));
        assert_eq!(parse_zone("GMT-05:30", 0), Ok(-(5 * 3600 + 1800)));
        assert_eq!(parse_zone("+0100", 0), Ok(3600));
        assert_eq!(parse_zone("Europe/Paris", 7).unwrap_err().at, 7);
    }

    #[test]
    fn formats_headers_and_rejects_what_is_missing() {
        let f = parse("header.t+1h:yyyy-MM-dd HH:mm", 0, false).unwrap();
        let ex = Exchange::new("").with_header("t", 0);
        assert_eq!(f.value(&ex).unwrap(), Value::from("1970-01-01 01:00"));
        assert_eq!(f.value(&Exchange::new("")).unwrap(), Value::Null);
        let bad = Exchange::new("").with_header("t", "soon");
        assert!(f.value(&bad).is_err());
        let z = parse("header.t:GMT+2:HH:mm", 0, true).unwrap();
        assert_eq!(z.value(&ex).unwrap(), Value::from("02:00"));
        assert!(parse("exchangeCreated:HH", 5, false).unwrap_err().at == 5);
        assert!(parse("tomorrow", 0, false).is_err());
        assert_eq!(parse("now:yyyy-qq", 5, false).unwrap_err().at, 14);
        let millis = parse("millis", 0, false).unwrap();
        assert!(matches!(millis.value(&ex).unwrap(), Value::Int(ms) if ms > 1_700_000_000_000));
    }
}
