//! MySQL and MariaDB: `?` placeholders, values bound as they are (the server converts),
//! rows read by column type; DECIMAL comes back as text, as the server sends it.

use serde_json::Value as Json;
use sqlx::mysql::{MySql, MySqlQueryResult, MySqlRow};
use sqlx::types::chrono::{NaiveDate, NaiveTime};
use sqlx::{Column, Row as _, TypeInfo};

use super::{bind_as_held, display, float, hex, local, utc, Bound, Dialect, QueryOn, Unreadable};
use crate::query::Arg;

impl Dialect for MySql {
    type Binding = ();

    fn bind<'q>(q: QueryOn<'q, Self>, arg: &Arg, _: &(), _: usize) -> Bound<'q, Self> {
        Ok(bind_as_held(q, arg))
    }

    fn affected(done: &MySqlQueryResult) -> u64 {
        done.rows_affected()
    }

    fn value(row: &MySqlRow, i: usize) -> Result<Json, Unreadable> {
        Ok(match row.column(i).type_info().name() {
            "BOOLEAN" | "TINYINT" | "SMALLINT" | "INT" | "MEDIUMINT" | "BIGINT" | "YEAR" => {
                row.try_get::<i64, _>(i)?.into()
            }
            t if t.ends_with("UNSIGNED") => row.try_get::<u64, _>(i)?.into(),
            "FLOAT" => float(f64::from(row.try_get::<f32, _>(i)?)),
            "DOUBLE" => float(row.try_get::<f64, _>(i)?),
            "DECIMAL" | "CHAR" | "VARCHAR" | "TINYTEXT" | "TEXT" | "MEDIUMTEXT" | "LONGTEXT"
            | "ENUM" | "SET" => row.try_get_unchecked::<String, _>(i)?.into(),
            "JSON" => {
                let text = row.try_get_unchecked::<String, _>(i)?;
                serde_json::from_str(&text).unwrap_or(Json::String(text))
            }
            "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BIT" => {
                hex(&row.try_get_unchecked::<Vec<u8>, _>(i)?)
            }
            "DATETIME" => local(row.try_get(i)?),
            "TIMESTAMP" => utc(row.try_get(i)?),
            "DATE" => display::<_, NaiveDate>(row, i)?,
            "TIME" => display::<_, NaiveTime>(row, i)?,
            other => return Err(Unreadable::Unsupported(other.to_string())),
        })
    }
}
