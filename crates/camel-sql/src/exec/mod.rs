//! Running a statement on one connection of each database, with Camel's values bound as
//! the database's types and rows turned into JSON objects.

pub(crate) mod mysql;
pub(crate) mod postgres;
pub(crate) mod sqlite;

use serde_json::{Map, Value as Json};

use crate::query::Arg;

/// One row: column name → value.
pub(crate) type Row = Map<String, Json>;

/// What running a statement (once per argument set) gave.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) rows: Vec<Row>,
    /// Rows changed, summed over the argument sets.
    pub(crate) affected: u64,
}

/// The value as an integer, when it is one (text that parses counts).
pub(crate) fn as_i64(arg: &Arg) -> Option<i64> {
    match arg {
        Arg::Int(i) => Some(*i),
        Arg::Bool(b) => Some(i64::from(*b)),
        Arg::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Some(*f as i64),
        Arg::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn as_f64(arg: &Arg) -> Option<f64> {
    match arg {
        Arg::Int(i) => Some(*i as f64),
        Arg::Float(f) => Some(*f),
        Arg::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn as_bool(arg: &Arg) -> Option<bool> {
    match arg {
        Arg::Bool(b) => Some(*b),
        Arg::Int(i) => Some(*i != 0),
        Arg::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "1" | "yes" => Some(true),
            "false" | "f" | "0" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn as_json(arg: &Arg) -> Json {
    match arg {
        Arg::Null => Json::Null,
        Arg::Bool(b) => Json::Bool(*b),
        Arg::Int(i) => Json::from(*i),
        Arg::Float(f) => Json::from(*f),
        // Text that holds JSON is sent as that JSON, not as a JSON string.
        Arg::Text(t) => serde_json::from_str(t).unwrap_or_else(|_| Json::String(t.clone())),
        Arg::Json(j) => j.clone(),
        Arg::Bytes(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
    }
}

/// Bytes in a row, as lowercase hex (JSON has no bytes).
pub(crate) fn hex(bytes: &[u8]) -> Json {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    Json::String(s)
}

pub(crate) fn float(f: f64) -> Json {
    serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
}

/// A point in time as RFC 3339 text in UTC.
pub(crate) fn utc(t: sqlx::types::chrono::DateTime<sqlx::types::chrono::Utc>) -> Json {
    Json::String(t.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string())
}

/// A date and time without a zone, as ISO 8601 text.
pub(crate) fn local(t: sqlx::types::chrono::NaiveDateTime) -> Json {
    Json::String(t.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
}
