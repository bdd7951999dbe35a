//! The SQL side of a replication consumer: the publication and the slot made when
//! missing, the snapshot's rows, and the marker that says a snapshot is unfinished.
//!
//! Everything here runs on an ordinary connection (sqlx); the stream itself runs on a
//! replication connection (pgwire-replication).

use futures::TryStreamExt;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{Connection, Row};

use crate::options::CdcOptions;

/// What can fail on the SQL side, with the server named (never the password).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SlotError {
    /// The server refused or did not answer.
    #[error("PostgreSQL {server}: {what}: {source}")]
    Database {
        /// `host:port/database`.
        server: String,
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// The slot or publication is missing and may not be created.
    #[error("PostgreSQL {server}: {what}")]
    Missing {
        /// `host:port/database`.
        server: String,
        /// What is missing, and the option that would create it.
        what: String,
    },
}

/// SQLSTATE duplicate_object: a slot or publication another process made at the same time.
const DUPLICATE_OBJECT: &str = "42710";

/// The marker comment put on the publication while a snapshot is unfinished.
fn pending_marker(slot: &str) -> String {
    format!("camel-cdc: snapshot of slot {slot} pending")
}

/// An ordinary connection to the endpoint's database.
pub(crate) async fn connect(o: &CdcOptions) -> Result<PgConnection, SlotError> {
    let mut options = PgConnectOptions::new()
        .host(&o.host)
        .port(o.port)
        .username(&o.user)
        .database(&o.database)
        .application_name("camel-cdc");
    if !o.password.0.is_empty() {
        options = options.password(&o.password.0);
    }
    PgConnection::connect_with(&options)
        .await
        .map_err(|source| SlotError::Database {
            server: o.server(),
            what: "connect",
            source,
        })
}

fn db<'a>(o: &'a CdcOptions, what: &'static str) -> impl FnOnce(sqlx::Error) -> SlotError + 'a {
    move |source| SlotError::Database {
        server: o.server(),
        what,
        source,
    }
}

fn is_duplicate(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == DUPLICATE_OBJECT)
}

/// Makes the publication when it is missing (and allowed to).
pub(crate) async fn ensure_publication(
    conn: &mut PgConnection,
    o: &CdcOptions,
) -> Result<(), SlotError> {
    let exists = sqlx::query("SELECT 1 FROM pg_publication WHERE pubname = $1")
        .bind(&o.publication)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db(o, "read pg_publication"))?
        .is_some();
    if exists {
        return Ok(());
    }
    if !o.auto_create_publication {
        return Err(SlotError::Missing {
            server: o.server(),
            what: format!(
                "no publication `{}` (create it, or set auto_create_publication=true)",
                o.publication
            ),
        });
    }
    // Names were checked to be plain identifiers (options.rs), so they need no quoting.
    let target = if o.tables.is_empty() {
        "ALL TABLES".to_string()
    } else {
        format!("TABLE {}", o.tables.join(", "))
    };
    let statement = format!("CREATE PUBLICATION {} FOR {target}", o.publication);
    match sqlx::query(&statement).execute(&mut *conn).await {
        Ok(_) => Ok(()),
        Err(e) if is_duplicate(&e) => Ok(()),
        Err(source) => Err(SlotError::Database {
            server: o.server(),
            what: "create the publication",
            source,
        }),
    }
}

/// True when the slot exists (and is a pgoutput slot of this database).
pub(crate) async fn slot_exists(
    conn: &mut PgConnection,
    o: &CdcOptions,
) -> Result<bool, SlotError> {
    let found = sqlx::query(
        "SELECT database::text, plugin::text FROM pg_replication_slots WHERE slot_name = $1",
    )
    .bind(&o.slot)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db(o, "read pg_replication_slots"))?;
    let Some(row) = found else {
        return Ok(false);
    };
    let database: Option<String> = row.try_get(0).map_err(db(o, "read the slot"))?;
    let plugin: Option<String> = row.try_get(1).map_err(db(o, "read the slot"))?;
    if database.as_deref() != Some(o.database.as_str())
        || plugin.as_deref() != Some(crate::options::OUTPUT_PLUGIN)
    {
        return Err(SlotError::Missing {
            server: o.server(),
            what: format!(
                "slot `{}` belongs to database {:?} with plugin {:?}; this endpoint needs a pgoutput slot of {}",
                o.slot, database, plugin, o.database
            ),
        });
    }
    Ok(true)
}

/// Makes the slot (refused without `auto_create_slot`). Another process making it at the
/// same moment is not an error.
pub(crate) async fn create_slot(conn: &mut PgConnection, o: &CdcOptions) -> Result<(), SlotError> {
    if !o.auto_create_slot {
        return Err(SlotError::Missing {
            server: o.server(),
            what: format!(
                "no replication slot `{}` (create it, or set auto_create_slot=true)",
                o.slot
            ),
        });
    }
    match sqlx::query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')")
        .bind(&o.slot)
        .execute(&mut *conn)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_duplicate(&e) => Ok(()),
        Err(source) => Err(SlotError::Database {
            server: o.server(),
            what: "create the replication slot",
            source,
        }),
    }
}

/// The slot's confirmed position (where a snapshot's rows are placed).
pub(crate) async fn confirmed_lsn(
    conn: &mut PgConnection,
    o: &CdcOptions,
) -> Result<u64, SlotError> {
    let text: Option<String> = sqlx::query_scalar(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
    )
    .bind(&o.slot)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db(o, "read the slot's position"))?
    .flatten();
    Ok(text
        .and_then(|t| pgwire_replication::Lsn::parse(&t).ok())
        .map_or(0, |l| l.0))
}

/// Marks (or clears) an unfinished snapshot on the publication, so a process that dies
/// during it takes the snapshot again at its next start.
pub(crate) async fn mark_snapshot(
    conn: &mut PgConnection,
    o: &CdcOptions,
    pending: bool,
) -> Result<(), SlotError> {
    let comment = if pending {
        format!("'{}'", pending_marker(&o.slot))
    } else {
        "NULL".to_string()
    };
    let statement = format!("COMMENT ON PUBLICATION {} IS {comment}", o.publication);
    sqlx::query(&statement)
        .execute(&mut *conn)
        .await
        .map_err(db(o, "mark the snapshot"))?;
    Ok(())
}

/// True when a snapshot was begun and not finished.
pub(crate) async fn snapshot_pending(
    conn: &mut PgConnection,
    o: &CdcOptions,
) -> Result<bool, SlotError> {
    let comment: Option<String> = sqlx::query_scalar(
        "SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = $1",
    )
    .bind(&o.publication)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db(o, "read the snapshot marker"))?
    .flatten();
    Ok(comment.as_deref() == Some(pending_marker(&o.slot).as_str()))
}

/// The publication's tables, as (schema, table).
pub(crate) async fn published_tables(
    conn: &mut PgConnection,
    o: &CdcOptions,
) -> Result<Vec<(String, String)>, SlotError> {
    let rows = sqlx::query(
        "SELECT schemaname::text, tablename::text FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2",
    )
    .bind(&o.publication)
    .fetch_all(&mut *conn)
    .await
    .map_err(db(o, "read the publication's tables"))?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(db(o, "read the publication's tables"))
}

/// Streams every row of one table as a JSON object (typed as the stream types them,
/// [`crate::value::to_json`]), handing each to `each`, which may wait: rows are read as
/// the route takes them, so memory stays bounded.
pub(crate) async fn for_each_row<F, Fut>(
    conn: &mut PgConnection,
    o: &CdcOptions,
    schema: &str,
    table: &str,
    mut each: F,
) -> Result<Result<(), camel_api::CamelError>, SlotError>
where
    F: FnMut(serde_json::Value) -> Fut,
    Fut: std::future::Future<Output = Result<(), camel_api::CamelError>>,
{
    let qualified = format!("{}.{}", quote_ident(schema), quote_ident(table));
    let columns: Vec<(String, i64)> = sqlx::query_as(
        "SELECT attname::text, atttypid::int8 FROM pg_attribute \
         WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
    )
    .bind(&qualified)
    .fetch_all(&mut *conn)
    .await
    .map_err(db(o, "read the table's columns"))?;
    if columns.is_empty() {
        return Ok(Ok(()));
    }
    let texts: Vec<String> = columns
        .iter()
        .map(|(name, _)| format!("{}::text", quote_ident(name)))
        .collect();
    let statement = format!("SELECT ARRAY[{}] FROM {qualified}", texts.join(", "));
    let mut rows = sqlx::query_scalar::<_, Vec<Option<String>>>(&statement).fetch(&mut *conn);
    while let Some(values) = rows.try_next().await.map_err(db(o, "read the snapshot"))? {
        let mut object = serde_json::Map::with_capacity(columns.len());
        for ((name, type_oid), value) in columns.iter().zip(values) {
            let value = match value {
                Some(text) => crate::value::to_json(u32::try_from(*type_oid).unwrap_or(0), &text),
                None => serde_json::Value::Null,
            };
            object.insert(name.clone(), value);
        }
        if let Err(e) = each(serde_json::Value::Object(object)).await {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Drops a slot (tests and tools; an abandoned logical slot keeps WAL for ever).
pub async fn drop_slot(url: &str, slot: &str) -> Result<(), sqlx::Error> {
    let mut conn = PgConnection::connect(url).await?;
    sqlx::query(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
    )
    .bind(slot)
    .execute(&mut conn)
    .await?;
    Ok(())
}
