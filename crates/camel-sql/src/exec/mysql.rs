//! MySQL and MariaDB: values are bound as they are (the server converts), rows read by
//! column type; DECIMAL comes back as text, as the server sends it.

use futures::TryStreamExt;
use sqlx::mysql::{MySql, MySqlArguments, MySqlConnection, MySqlRow};
use sqlx::query::Query;
use sqlx::types::chrono::{NaiveDate, NaiveTime};
use sqlx::{Column, Either, Executor, Row as _, TypeInfo, ValueRef};

use super::{float, hex, Outcome, Row};
use crate::error::SqlError;
use crate::query::{Arg, Statement};

pub(crate) async fn run(
    conn: &mut MySqlConnection,
    stmt: &Statement,
    sets: &[Vec<Arg>],
    ds: &str,
) -> Result<Outcome, SqlError> {
    let db = |e| SqlError::database(ds, e);
    let sql = stmt.question_marks();
    let mut out = Outcome::default();
    for args in sets {
        let mut q = sqlx::query::<MySql>(&sql);
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

fn bind<'q>(q: Query<'q, MySql, MySqlArguments>, arg: &Arg) -> Query<'q, MySql, MySqlArguments> {
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

fn row_map(row: &MySqlRow, ds: &str) -> Result<Row, SqlError> {
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
            "BOOLEAN" | "TINYINT" | "SMALLINT" | "INT" | "MEDIUMINT" | "BIGINT" | "YEAR" => {
                row.try_get::<i64, _>(i).map_err(db)?.into()
            }
            t if t.ends_with("UNSIGNED") => row.try_get::<u64, _>(i).map_err(db)?.into(),
            "FLOAT" => float(f64::from(row.try_get::<f32, _>(i).map_err(db)?)),
            "DOUBLE" => float(row.try_get::<f64, _>(i).map_err(db)?),
            "DECIMAL" | "CHAR" | "VARCHAR" | "TINYTEXT" | "TEXT" | "MEDIUMTEXT" | "LONGTEXT"
            | "ENUM" | "SET" => row.try_get_unchecked::<String, _>(i).map_err(db)?.into(),
            "JSON" => {
                let text = row.try_get_unchecked::<String, _>(i).map_err(db)?;
                serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
            }
            "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BIT" => {
                hex(&row.try_get_unchecked::<Vec<u8>, _>(i).map_err(db)?)
            }
            "DATETIME" => super::local(row.try_get(i).map_err(db)?),
            "TIMESTAMP" => super::utc(row.try_get(i).map_err(db)?),
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
