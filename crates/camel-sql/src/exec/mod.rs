//! Running a statement on one connection of each database, with Camel's values bound as
//! the database's types and rows turned into JSON objects.
//!
//! [`run`] is the one execution path: where the connection comes from, one execution per
//! argument set, rows and changed-row counts collected. What really differs between
//! databases — placeholder syntax, how a value is bound, how a column is read — is a
//! [`Dialect`], implemented for each sqlx database in its own file.

mod mysql;
mod postgres;
mod sqlite;

use std::future::Future;

use futures::TryStreamExt;
use serde_json::{Map, Value as Json};
use sqlx::query::Query;
use sqlx::{
    Column, ColumnIndex, Connection, Database, Either, Encode, Executor, IntoArguments, Pool,
    Row as _, Transaction, Type, ValueRef,
};

use crate::error::SqlError;
use crate::query::{Arg, Statement};

/// One row: column name → value.
pub(crate) type Row = Map<String, Json>;

/// What running a statement (once per argument set) gave.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) rows: Vec<Row>,
    /// Rows changed, summed over the argument sets.
    pub(crate) affected: u64,
}

/// A query on `DB` being built, one bound value at a time.
pub(crate) type QueryOn<'q, DB> = Query<'q, DB, <DB as Database>::Arguments<'q>>;

/// What [`Dialect::bind`] gives: the query with one more value, or why it cannot take it.
pub(crate) type Bound<'q, DB> = Result<QueryOn<'q, DB>, SqlError>;

/// What one database does its own way when a statement runs; the rest is [`run`].
pub(crate) trait Dialect: Database {
    /// How the parameters bind, worked out once per [`run`] and used for every argument
    /// set (PostgreSQL: the type the server expects for each parameter).
    type Binding: Default + Send + Sync;

    /// How a batch's own transaction begins: `None` for the driver's default `BEGIN`.
    const BEGIN: Option<&'static str> = None;

    /// The statement's text with this database's placeholders, and its binding. By
    /// default `?` placeholders, and nothing to learn from the server.
    fn prepare<'c>(
        _conn: &'c mut Self::Connection,
        stmt: &'c Statement,
        _ds: &'c str,
    ) -> impl Future<Output = Result<(String, Self::Binding), SqlError>> + Send + 'c {
        std::future::ready(Ok((stmt.question_marks(), Self::Binding::default())))
    }

    /// Binds `arg`, the parameter at 0-based `index`.
    fn bind<'q>(
        q: QueryOn<'q, Self>,
        arg: &Arg,
        binding: &Self::Binding,
        index: usize,
    ) -> Bound<'q, Self>;

    /// Rows the statement changed.
    fn affected(done: &Self::QueryResult) -> u64;

    /// The value of column `index`, known not to be NULL, as JSON.
    fn value(row: &Self::Row, index: usize) -> Result<Json, Unreadable>;
}

/// Why a column's value could not be read ([`row_map`] adds the column and datasource).
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// The driver could not decode it.
    Decode(sqlx::Error),
    /// Its raw bytes could not be had.
    Raw(String),
    /// A type the component does not convert (its name as the database gives it).
    Unsupported(String),
}

impl From<sqlx::Error> for Unreadable {
    fn from(e: sqlx::Error) -> Self {
        Unreadable::Decode(e)
    }
}

/// Where a statement runs.
pub(crate) enum On<'a, DB: Database> {
    /// A connection already in use: the enclosing `transacted` step's.
    Connection(&'a mut DB::Connection),
    /// A connection of the pool; a batch of several argument sets in a transaction of its
    /// own (begun as [`Dialect::BEGIN`] says), so it applies entirely or not at all.
    Pool(&'a Pool<DB>),
}

/// Runs `stmt` once per argument set in `sets`, in order; `ds` is the datasource as
/// errors show it.
pub(crate) async fn run<DB: Dialect>(
    on: On<'_, DB>,
    stmt: &Statement,
    sets: &[Vec<Arg>],
    ds: &str,
) -> Result<Outcome, SqlError>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    usize: ColumnIndex<DB::Row>,
{
    let db = |e| SqlError::database(ds, e);
    let mut pooled;
    let mut own: Option<Transaction<'_, DB>> = None;
    let conn: &mut DB::Connection = match on {
        On::Connection(conn) => conn,
        On::Pool(pool) => {
            pooled = pool.acquire().await.map_err(db)?;
            if sets.len() > 1 {
                let tx = match DB::BEGIN {
                    Some(begin) => pooled.begin_with(begin).await,
                    None => pooled.begin().await,
                };
                own.insert(tx.map_err(db)?)
            } else {
                &mut pooled
            }
        }
    };
    let (sql, binding) = DB::prepare(&mut *conn, stmt, ds).await?;
    let mut out = Outcome::default();
    for args in sets {
        let mut q = sqlx::query::<DB>(&sql);
        for (i, arg) in args.iter().enumerate() {
            q = DB::bind(q, arg, &binding, i)?;
        }
        let mut results = (&mut *conn).fetch_many(q);
        while let Some(item) = results.try_next().await.map_err(db)? {
            match item {
                Either::Left(done) => out.affected += DB::affected(&done),
                Either::Right(row) => out.rows.push(row_map::<DB>(&row, ds)?),
            }
        }
    }
    if let Some(tx) = own {
        tx.commit().await.map_err(db)?;
    }
    Ok(out)
}

fn row_map<DB: Dialect>(row: &DB::Row, ds: &str) -> Result<Row, SqlError>
where
    usize: ColumnIndex<DB::Row>,
{
    let mut map = Row::new();
    for (i, column) in row.columns().iter().enumerate() {
        let null = row
            .try_get_raw(i)
            .map_err(|e| SqlError::database(ds, e))?
            .is_null();
        let value = if null {
            Json::Null
        } else {
            DB::value(row, i).map_err(|e| match e {
                Unreadable::Decode(e) => SqlError::database(ds, e),
                Unreadable::Raw(message) => SqlError::Database {
                    datasource: ds.to_string(),
                    message,
                },
                Unreadable::Unsupported(type_name) => SqlError::UnsupportedColumn {
                    column: column.name().to_string(),
                    type_name,
                },
            })?
        };
        map.insert(column.name().to_string(), value);
    }
    Ok(map)
}

/// Binds `arg` as the Rust type it holds, for databases that convert a value to the
/// column's type themselves (MySQL, SQLite).
fn bind_as_held<'q, DB: Database>(q: QueryOn<'q, DB>, arg: &Arg) -> QueryOn<'q, DB>
where
    Option<String>: Encode<'q, DB> + Type<DB>,
    bool: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    f64: Encode<'q, DB> + Type<DB>,
    String: Encode<'q, DB> + Type<DB>,
    Vec<u8>: Encode<'q, DB> + Type<DB>,
{
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

/// The value at `index` read as `T`, as its display text (dates, times, UUIDs).
pub(crate) fn display<'r, R, T>(row: &'r R, index: usize) -> Result<Json, sqlx::Error>
where
    R: sqlx::Row,
    usize: ColumnIndex<R>,
    T: sqlx::Decode<'r, R::Database> + Type<R::Database> + ToString,
{
    Ok(Json::String(row.try_get::<T, _>(index)?.to_string()))
}
