//! SQLite: `?` placeholders, values bound as they are (SQLite converts by column
//! affinity) and read by the type each value is stored as.

use serde_json::Value as Json;
use sqlx::sqlite::{Sqlite, SqliteQueryResult, SqliteRow};
use sqlx::{Row as _, TypeInfo, ValueRef};

use super::{bind_as_held, float, hex, Bound, Dialect, QueryOn, Unreadable};
use crate::query::Arg;

impl Dialect for Sqlite {
    type Binding = ();

    /// The write lock at once: a deferred transaction that reads before it writes gets
    /// SQLITE_BUSY ("database is locked") when another connection wrote meanwhile,
    /// whatever the busy timeout.
    const BEGIN: Option<&'static str> = Some("BEGIN IMMEDIATE");

    fn bind<'q>(q: QueryOn<'q, Self>, arg: &Arg, _: &(), _: usize) -> Bound<'q, Self> {
        Ok(bind_as_held(q, arg))
    }

    fn affected(done: &SqliteQueryResult) -> u64 {
        done.rows_affected()
    }

    fn value(row: &SqliteRow, i: usize) -> Result<Json, Unreadable> {
        Ok(match row.try_get_raw(i)?.type_info().name() {
            "INTEGER" | "BOOLEAN" => row.try_get_unchecked::<i64, _>(i)?.into(),
            "REAL" | "NUMERIC" => float(row.try_get_unchecked::<f64, _>(i)?),
            "BLOB" => hex(&row.try_get_unchecked::<Vec<u8>, _>(i)?),
            _ => row.try_get_unchecked::<String, _>(i)?.into(),
        })
    }
}
