//! PostgreSQL: parameter types come from preparing the statement (PostgreSQL does not
//! turn text into a number for an integer column), so a header `"5"` binds as `5`.
//! Parameters of types the component has no Rust type for (timestamps, numeric, uuid…)
//! are sent as text and cast by the database.

use serde_json::Value as Json;
use sqlx::postgres::{PgConnection, PgQueryResult, PgRow, Postgres};
use sqlx::types::chrono::{NaiveDate, NaiveTime};
use sqlx::{Column, Either, Executor, Row as _, Statement as _, TypeInfo};

use super::{
    as_bool, as_f64, as_i64, as_json, display, float, hex, local, utc, Bound, Dialect, QueryOn,
    Unreadable,
};
use crate::error::SqlError;
use crate::query::{Arg, Statement};

/// Parameter types bound as themselves; any other is sent as text and cast.
const DIRECT: &[&str] = &[
    "BOOL", "INT2", "INT4", "INT8", "FLOAT4", "FLOAT8", "TEXT", "VARCHAR", "BPCHAR", "NAME",
    "JSON", "JSONB", "BYTEA", "UNKNOWN",
];

impl Dialect for Postgres {
    /// The type each parameter is bound as, by position; past the end, text.
    type Binding = Vec<String>;

    async fn prepare(
        conn: &mut PgConnection,
        stmt: &Statement,
        ds: &str,
    ) -> Result<(String, Vec<String>), SqlError> {
        let plain = stmt.dollars(&[]);
        let prepared = conn
            .prepare(&plain)
            .await
            .map_err(|e| SqlError::database(ds, e))?;
        let types: Vec<String> = match prepared.parameters() {
            Some(Either::Left(types)) => types.iter().map(|t| t.name().to_string()).collect(),
            _ => Vec::new(),
        };
        let cast: Vec<Option<String>> = types
            .iter()
            .map(|t| (!DIRECT.contains(&t.as_str())).then(|| t.clone()))
            .collect();
        if !cast.iter().any(Option::is_some) {
            return Ok((plain, types));
        }
        let sql = stmt.dollars(&cast);
        let binding = types
            .into_iter()
            .zip(&cast)
            .map(|(t, c)| if c.is_some() { "TEXT".to_string() } else { t })
            .collect();
        Ok((sql, binding))
    }

    fn bind<'q>(q: QueryOn<'q, Self>, arg: &Arg, types: &Vec<String>, i: usize) -> Bound<'q, Self> {
        let ty = types.get(i).map_or("TEXT", String::as_str);
        let null = matches!(arg, Arg::Null);
        let refused = || SqlError::Bind {
            index: i + 1,
            value: arg.shown(),
            expected: ty.to_string(),
        };
        let small = |v: i64| i16::try_from(v).ok();
        let int = |v: i64| i32::try_from(v).ok();
        Ok(match ty {
            "BOOL" => q.bind(typed(null, as_bool(arg), refused)?),
            "INT2" => q.bind(typed(null, as_i64(arg).and_then(small), refused)?),
            "INT4" => q.bind(typed(null, as_i64(arg).and_then(int), refused)?),
            "INT8" => q.bind(typed(null, as_i64(arg), refused)?),
            "FLOAT4" => q.bind(typed(null, as_f64(arg).map(|v| v as f32), refused)?),
            "FLOAT8" => q.bind(typed(null, as_f64(arg), refused)?),
            "JSON" | "JSONB" => q.bind((!null).then(|| as_json(arg))),
            "BYTEA" => q.bind(match arg {
                Arg::Null => None,
                Arg::Bytes(b) => Some(b.clone()),
                other => Some(other.text().unwrap_or_default().into_bytes()),
            }),
            _ => q.bind(arg.text()),
        })
    }

    fn affected(done: &PgQueryResult) -> u64 {
        done.rows_affected()
    }

    fn value(row: &PgRow, i: usize) -> Result<Json, Unreadable> {
        Ok(match row.column(i).type_info().name() {
            "BOOL" => row.try_get::<bool, _>(i)?.into(),
            "INT2" => row.try_get::<i16, _>(i)?.into(),
            "INT4" => row.try_get::<i32, _>(i)?.into(),
            "INT8" => row.try_get::<i64, _>(i)?.into(),
            "OID" => i64::from(row.try_get::<sqlx::postgres::types::Oid, _>(i)?.0).into(),
            "FLOAT4" => float(f64::from(row.try_get::<f32, _>(i)?)),
            "FLOAT8" => float(row.try_get::<f64, _>(i)?),
            "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" | "CHAR" | "\"CHAR\"" | "UNKNOWN" => {
                row.try_get::<String, _>(i)?.into()
            }
            "JSON" | "JSONB" => row.try_get::<Json, _>(i)?,
            "BYTEA" => hex(&row.try_get::<Vec<u8>, _>(i)?),
            "UUID" => display::<_, sqlx::types::Uuid>(row, i)?,
            "TIMESTAMPTZ" => utc(row.try_get(i)?),
            "TIMESTAMP" => local(row.try_get(i)?),
            "DATE" => display::<_, NaiveDate>(row, i)?,
            "TIME" => display::<_, NaiveTime>(row, i)?,
            "NUMERIC" => {
                let raw = row.try_get_raw(i)?;
                let bytes = raw.as_bytes().map_err(|e| Unreadable::Raw(e.to_string()))?;
                numeric_text(bytes)
                    .map(Json::String)
                    .ok_or_else(|| Unreadable::Unsupported("NUMERIC (malformed)".into()))?
            }
            other => return Err(Unreadable::Unsupported(other.to_string())),
        })
    }
}

/// `None` (NULL of the parameter's type) for a NULL argument, else the argument
/// converted to that type, or `refused` when it does not convert.
fn typed<T>(
    null: bool,
    converted: Option<T>,
    refused: impl FnOnce() -> SqlError,
) -> Result<Option<T>, SqlError> {
    if null {
        return Ok(None);
    }
    converted.map(Some).ok_or_else(refused)
}

/// PostgreSQL's binary NUMERIC as exact decimal text: base-10000 digit groups, the
/// weight of the first group, a sign and the number of decimals shown. Text, not a JSON
/// number, so no digit is lost to a float.
fn numeric_text(b: &[u8]) -> Option<String> {
    let word = |i: usize| Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]));
    let ndigits = usize::from(word(0)?);
    let weight = i32::from(word(2)? as i16);
    let sign = word(4)?;
    let dscale = usize::from(word(6)?);
    match sign {
        0xC000 => return Some("NaN".into()),
        0xD000 => return Some("Infinity".into()),
        0xF000 => return Some("-Infinity".into()),
        _ => {}
    }
    let digits = (0..ndigits)
        .map(|k| word(8 + 2 * k))
        .collect::<Option<Vec<u16>>>()?;
    let group = |k: i32| {
        usize::try_from(k)
            .ok()
            .and_then(|k| digits.get(k))
            .copied()
            .unwrap_or(0)
    };
    let mut text = String::new();
    if sign == 0x4000 {
        text.push('-');
    }
    if weight < 0 {
        text.push('0');
    } else {
        text.push_str(&group(0).to_string());
        for k in 1..=weight {
            text.push_str(&format!("{:04}", group(k)));
        }
    }
    if dscale > 0 {
        let mut fraction = String::new();
        let mut k = weight + 1;
        while fraction.len() < dscale {
            fraction.push_str(&format!("{:04}", group(k)));
            k += 1;
        }
        fraction.truncate(dscale);
        text.push('.');
        text.push_str(&fraction);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::numeric_text;

    fn numeric(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    #[test]
    fn numeric_groups_become_exact_text() {
        // 123456789.0001
        let b = numeric(4, 2, 0, 4, &[1, 2345, 6789, 1]);
        assert_eq!(numeric_text(&b).unwrap(), "123456789.0001");
        // -0.00001
        let b = numeric(1, -2, 0x4000, 5, &[1000]);
        assert_eq!(numeric_text(&b).unwrap(), "-0.00001");
        // 12.50
        let b = numeric(2, 0, 0, 2, &[12, 5000]);
        assert_eq!(numeric_text(&b).unwrap(), "12.50");
        // 10000 (trailing zero groups are not stored)
        let b = numeric(1, 1, 0, 0, &[1]);
        assert_eq!(numeric_text(&b).unwrap(), "10000");
        assert!(numeric_text(&[0, 1]).is_none());
    }
}
