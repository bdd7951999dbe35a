//! PostgreSQL: parameter types come from preparing the statement (PostgreSQL does not
//! turn text into a number for an integer column), so a header `"5"` binds as `5`.
//! Parameters of types the component has no Rust type for (timestamps, numeric, uuid…)
//! are sent as text and cast by the database.

use futures::TryStreamExt;
use sqlx::postgres::{PgArguments, PgConnection, PgRow, Postgres};
use sqlx::query::Query;
use sqlx::types::chrono::{NaiveDate, NaiveTime};
use sqlx::{Column, Either, Executor, Row as _, Statement as _, TypeInfo, ValueRef};

use super::{as_bool, as_f64, as_i64, as_json, float, hex, Outcome, Row};
use crate::error::SqlError;
use crate::query::{Arg, Statement};

const DIRECT: &[&str] = &[
    "BOOL", "INT2", "INT4", "INT8", "FLOAT4", "FLOAT8", "TEXT", "VARCHAR", "BPCHAR", "NAME",
    "JSON", "JSONB", "BYTEA", "UNKNOWN",
];

pub(crate) async fn run(
    conn: &mut PgConnection,
    stmt: &Statement,
    sets: &[Vec<Arg>],
    ds: &str,
) -> Result<Outcome, SqlError> {
    let db = |e| SqlError::database(ds, e);
    let plain = stmt.dollars(&[]);
    let prepared = (&mut *conn).prepare(&plain).await.map_err(db)?;
    let types: Vec<String> = match prepared.parameters() {
        Some(Either::Left(types)) => types.iter().map(|t| t.name().to_string()).collect(),
        _ => Vec::new(),
    };
    let cast: Vec<Option<String>> = types
        .iter()
        .map(|t| (!DIRECT.contains(&t.as_str())).then(|| t.clone()))
        .collect();
    let sql = if cast.iter().any(Option::is_some) {
        stmt.dollars(&cast)
    } else {
        plain
    };
    let mut out = Outcome::default();
    for args in sets {
        let mut q = sqlx::query::<Postgres>(&sql);
        for (i, arg) in args.iter().enumerate() {
            let ty = match cast.get(i) {
                Some(Some(_)) => "TEXT",
                _ => types.get(i).map_or("TEXT", String::as_str),
            };
            q = bind(q, arg, ty, i)?;
        }
        let mut results = (&mut *conn).fetch_many(q);
        while let Some(item) = results.try_next().await.map_err(db)? {
            match item {
                Either::Left(done) => out.affected += done.rows_affected(),
                Either::Right(row) => out.rows.push(row_map(&row, ds)?),
            }
        }
    }
    Ok(out)
}

type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

fn bind<'q>(q: PgQuery<'q>, arg: &Arg, ty: &str, i: usize) -> Result<PgQuery<'q>, SqlError> {
    let bad = || SqlError::Bind {
        index: i + 1,
        value: arg.shown(),
        expected: ty.to_string(),
    };
    let null = matches!(arg, Arg::Null);
    Ok(match ty {
        "BOOL" => q.bind(if null {
            None
        } else {
            Some(as_bool(arg).ok_or_else(bad)?)
        }),
        "INT2" => q.bind(if null {
            None
        } else {
            Some(
                as_i64(arg)
                    .and_then(|v| i16::try_from(v).ok())
                    .ok_or_else(bad)?,
            )
        }),
        "INT4" => q.bind(if null {
            None
        } else {
            Some(
                as_i64(arg)
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(bad)?,
            )
        }),
        "INT8" => q.bind(if null {
            None
        } else {
            Some(as_i64(arg).ok_or_else(bad)?)
        }),
        "FLOAT4" => q.bind(if null {
            None
        } else {
            Some(as_f64(arg).ok_or_else(bad)? as f32)
        }),
        "FLOAT8" => q.bind(if null {
            None
        } else {
            Some(as_f64(arg).ok_or_else(bad)?)
        }),
        "JSON" | "JSONB" => q.bind(if null { None } else { Some(as_json(arg)) }),
        "BYTEA" => q.bind(match arg {
            Arg::Null => None,
            Arg::Bytes(b) => Some(b.clone()),
            other => Some(other.text().unwrap_or_default().into_bytes()),
        }),
        _ => q.bind(arg.text()),
    })
}

fn row_map(row: &PgRow, ds: &str) -> Result<Row, SqlError> {
    let db = |e| SqlError::database(ds, e);
    let mut map = Row::new();
    for (i, col) in row.columns().iter().enumerate() {
        let name = col.name().to_string();
        if row.try_get_raw(i).map_err(db)?.is_null() {
            map.insert(name, serde_json::Value::Null);
            continue;
        }
        let ty = col.type_info().name();
        let value = match ty {
            "BOOL" => row.try_get::<bool, _>(i).map_err(db)?.into(),
            "INT2" => row.try_get::<i16, _>(i).map_err(db)?.into(),
            "INT4" => row.try_get::<i32, _>(i).map_err(db)?.into(),
            "INT8" => row.try_get::<i64, _>(i).map_err(db)?.into(),
            "OID" => i64::from(
                row.try_get::<sqlx::postgres::types::Oid, _>(i)
                    .map_err(db)?
                    .0,
            )
            .into(),
            "FLOAT4" => float(f64::from(row.try_get::<f32, _>(i).map_err(db)?)),
            "FLOAT8" => float(row.try_get::<f64, _>(i).map_err(db)?),
            "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" | "CHAR" | "\"CHAR\"" | "UNKNOWN" => {
                row.try_get::<String, _>(i).map_err(db)?.into()
            }
            "JSON" | "JSONB" => row.try_get::<serde_json::Value, _>(i).map_err(db)?,
            "BYTEA" => hex(&row.try_get::<Vec<u8>, _>(i).map_err(db)?),
            "UUID" => row
                .try_get::<sqlx::types::Uuid, _>(i)
                .map_err(db)?
                .to_string()
                .into(),
            "TIMESTAMPTZ" => super::utc(row.try_get(i).map_err(db)?),
            "TIMESTAMP" => super::local(row.try_get(i).map_err(db)?),
            "DATE" => row
                .try_get::<NaiveDate, _>(i)
                .map_err(db)?
                .to_string()
                .into(),
            "TIME" => row
                .try_get::<NaiveTime, _>(i)
                .map_err(db)?
                .to_string()
                .into(),
            "NUMERIC" => {
                let raw = row.try_get_raw(i).map_err(db)?;
                let bytes = raw.as_bytes().map_err(|e| SqlError::Database {
                    datasource: ds.to_string(),
                    message: e.to_string(),
                })?;
                numeric_text(bytes)
                    .map(serde_json::Value::String)
                    .ok_or_else(|| SqlError::UnsupportedColumn {
                        column: name.clone(),
                        type_name: "NUMERIC (malformed)".into(),
                    })?
            }
            other => {
                return Err(SqlError::UnsupportedColumn {
                    column: name,
                    type_name: other.to_string(),
                })
            }
        };
        map.insert(name, value);
    }
    Ok(map)
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
