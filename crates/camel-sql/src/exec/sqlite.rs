//! SQLite: values are bound as they are (SQLite converts by column affinity) and read by
//! the type each value is stored as.

use futures::TryStreamExt;
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection, SqliteRow};
use sqlx::{Column, Either, Executor, Row as _, TypeInfo, ValueRef};

use super::{float, hex, Outcome, Row};
use crate::error::SqlError;
use crate::query::{Arg, Statement};

pub(crate) async fn run(
    conn: &mut SqliteConnection,
    stmt: &Statement,
    sets: &[Vec<Arg>],
    ds: &str,
) -> Result<Outcome, SqlError> {
    let db = |e| SqlError::database(ds, e);
    let sql = stmt.question_marks();
    let mut out = Outcome::default();
    for args in sets {
        let mut q = sqlx::query::<Sqlite>(&sql);
        for arg in args {
            q = bind(q, arg);
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

fn bind<'q>(
    q: Query<'q, Sqlite, SqliteArguments<'q>>,
    arg: &Arg,
) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    match arg {
        Arg::Null => q.bind(None::<String>),
        Arg::Bool(b) => q.bind(*b),
        Arg::Int(i) => q.bind(*i),
        Arg::Float(f) => q.bind(*f),
        Arg::Text(t) => q.bind(t.clone()),
        Arg::Json(j) => q.bind(j.to_string()),
        Arg::Bytes(b) => q.bind(b.clone()),
    }
}

fn row_map(row: &SqliteRow, ds: &str) -> Result<Row, SqlError> {
    let db = |e| SqlError::database(ds, e);
    let mut map = Row::new();
    for (i, col) in row.columns().iter().enumerate() {
        let raw = row.try_get_raw(i).map_err(db)?;
        let stored = raw.type_info().name().to_string();
        let value = if raw.is_null() {
            serde_json::Value::Null
        } else {
            match stored.as_str() {
                "INTEGER" | "BOOLEAN" => row.try_get_unchecked::<i64, _>(i).map_err(db)?.into(),
                "REAL" | "NUMERIC" => float(row.try_get_unchecked::<f64, _>(i).map_err(db)?),
                "BLOB" => hex(&row.try_get_unchecked::<Vec<u8>, _>(i).map_err(db)?),
                _ => row.try_get_unchecked::<String, _>(i).map_err(db)?.into(),
            }
        };
        map.insert(col.name().to_string(), value);
    }
    Ok(map)
}
