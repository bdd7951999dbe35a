//! A row change as an exchange: the row as a JSON body, what happened as headers.

use std::sync::Arc;

use camel_api::{Body, Exchange};

use crate::pgoutput::{Operation, Relation, RowChange};
use crate::value::row;

/// Header: the table's name.
pub const TABLE_HEADER: &str = "CamelPgReplicationTable";
/// Header: the table's schema.
pub const SCHEMA_HEADER: &str = "CamelPgReplicationSchema";
/// Header: `insert`, `update`, `delete` or `snapshot`.
pub const OPERATION_HEADER: &str = "CamelPgReplicationOperation";
/// Header: the WAL position of the change (`X/Y`, as PostgreSQL writes an LSN).
pub const LSN_HEADER: &str = "CamelPgReplicationLsn";
/// Header: the WAL position of its transaction's commit (`X/Y`).
pub const COMMIT_LSN_HEADER: &str = "CamelPgReplicationCommitLsn";
/// Header: commit time, milliseconds since the Unix epoch.
pub const COMMIT_TIME_HEADER: &str = "CamelPgReplicationCommitTime";
/// Header: the transaction id.
pub const TRANSACTION_ID_HEADER: &str = "CamelPgReplicationTransactionId";
/// Header: the old key (or the whole old row under `REPLICA IDENTITY FULL`) of an
/// update or delete, as JSON, when the server sent it.
pub const BEFORE_HEADER: &str = "CamelPgReplicationBefore";

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
const PG_EPOCH_OFFSET_MICROS: i64 = 946_684_800_000_000;

/// An LSN as PostgreSQL writes it.
pub fn format_lsn(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// The transaction a change belongs to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Transaction {
    pub(crate) commit_lsn: u64,
    /// Microseconds since 2000-01-01.
    pub(crate) commit_time: i64,
    pub(crate) xid: u32,
}

/// The exchange for one streamed change. The body is the new row (insert, update) or
/// the old key/row (delete).
pub(crate) fn change_exchange(
    change: &RowChange,
    relation: &Relation,
    tx: &Transaction,
    lsn: u64,
) -> Exchange {
    // `K` tuples carry only the key's columns (the others are null); `O` carries them all.
    let old = change
        .old
        .as_ref()
        .map(|cells| row(&relation.columns, cells, !change.old_is_full));
    let body = match (&change.new, &old) {
        (Some(cells), _) => row(&relation.columns, cells, false),
        (None, Some(old)) => old.clone(),
        (None, None) => serde_json::Value::Null,
    };
    let mut exchange = Exchange::new(Body::Json(Arc::new(body)))
        .with_header(TABLE_HEADER, relation.table.as_str())
        .with_header(SCHEMA_HEADER, relation.schema.as_str())
        .with_header(OPERATION_HEADER, change.operation.as_str())
        .with_header(LSN_HEADER, format_lsn(lsn))
        .with_header(COMMIT_LSN_HEADER, format_lsn(tx.commit_lsn))
        .with_header(
            COMMIT_TIME_HEADER,
            (tx.commit_time + PG_EPOCH_OFFSET_MICROS) / 1000,
        )
        .with_header(TRANSACTION_ID_HEADER, i64::from(tx.xid));
    if change.operation == Operation::Update {
        if let Some(old) = old {
            exchange = exchange.with_header(BEFORE_HEADER, old);
        }
    }
    exchange
}

/// The exchange for one row of the initial snapshot (`row_to_json` already typed it).
pub(crate) fn snapshot_exchange(
    schema: &str,
    table: &str,
    row: serde_json::Value,
    slot_lsn: u64,
) -> Exchange {
    Exchange::new(Body::Json(Arc::new(row)))
        .with_header(TABLE_HEADER, table)
        .with_header(SCHEMA_HEADER, schema)
        .with_header(OPERATION_HEADER, Operation::Snapshot.as_str())
        .with_header(LSN_HEADER, format_lsn(slot_lsn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_read_as_postgres_writes_them() {
        assert_eq!(format_lsn(0x016B_3748), "0/16B3748");
        assert_eq!(format_lsn((3u64 << 32) | 0xA0), "3/A0");
    }
}
