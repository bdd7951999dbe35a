//! Decoding of the `pgoutput` plugin's messages (protocol version 1) into changes.
//!
//! The server sends a `Relation` message describing a table before the first change of
//! it in each session (and again after its definition changed); changes then refer to
//! the table by its oid. So the decoder keeps the relations it was told of, and a change
//! of a table it was not told of is a protocol error, never a guess.
//!
//! Column values arrive in their text form; [`crate::value`] turns them into JSON.

use std::collections::HashMap;

use bytes::{Buf, Bytes};

/// A decoding failure: the stream is not what protocol version 1 describes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The message ended before a field it announces.
    #[error("pgoutput message `{tag}` ends early")]
    Truncated {
        /// The message's tag.
        tag: char,
    },
    /// A change refers to a table no `Relation` message described.
    #[error("pgoutput change of relation {oid}, which the server never described")]
    UnknownRelation {
        /// The table's oid.
        oid: u32,
    },
    /// A byte where the protocol allows only a few.
    #[error("pgoutput message `{tag}`: unexpected marker `{marker}`")]
    Unexpected {
        /// The message's tag.
        tag: char,
        /// The marker found.
        marker: char,
    },
}

/// One column of a table, as a `Relation` message describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Part of the replica identity (the key sent with updates and deletes).
    pub key: bool,
    /// Its name.
    pub name: String,
    /// Its type's oid (how [`crate::value::to_json`] reads the text).
    pub type_oid: u32,
}

/// A table, as a `Relation` message describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// Schema name.
    pub schema: String,
    /// Table name.
    pub table: String,
    /// Columns in table order.
    pub columns: Vec<Column>,
}

/// One column's value in a tuple.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// SQL NULL.
    Null,
    /// A TOASTed value the update did not change (the server does not resend it).
    Unchanged,
    /// The value's text form.
    Text(Bytes),
}

/// What happened to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A row was inserted.
    Insert,
    /// A row was updated.
    Update,
    /// A row was deleted.
    Delete,
    /// A row read by the initial snapshot.
    Snapshot,
}

impl Operation {
    /// The value of the operation header.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Insert => "insert",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::Snapshot => "snapshot",
        }
    }
}

/// A row change, with the table it belongs to.
#[derive(Debug, Clone)]
pub struct RowChange {
    /// Insert, update or delete.
    pub operation: Operation,
    /// The table's oid (look it up with [`Decoder::relation`]).
    pub relation: u32,
    /// The new row (insert, update); none for a delete.
    pub new: Option<Vec<Cell>>,
    /// The old key (`K`, replica identity default or index) or the whole old row (`O`,
    /// replica identity full): sent with deletes, and with updates that changed the key
    /// or under replica identity full.
    pub old: Option<Vec<Cell>>,
    /// The old tuple is the whole row (`O`), not only the key (`K`).
    pub old_is_full: bool,
}

/// A decoded message the consumer acts on.
#[derive(Debug, Clone)]
pub enum Message {
    /// A transaction begins: its commit position, commit time and id.
    Begin {
        /// The LSN of the commit record.
        final_lsn: u64,
        /// Commit time, microseconds since 2000-01-01.
        commit_time: i64,
        /// Transaction id.
        xid: u32,
    },
    /// The transaction commits; `end_lsn` is the position to confirm once it is settled.
    Commit {
        /// The LSN just past the commit record.
        end_lsn: u64,
    },
    /// A row changed.
    Row(RowChange),
    /// Anything else (relation, type, origin, truncate, logical message): nothing to
    /// deliver.
    Other,
}

/// Decodes one session's messages, remembering the relations.
#[derive(Debug, Default)]
pub struct Decoder {
    relations: HashMap<u32, Relation>,
}

impl Decoder {
    /// A decoder that knows no relation yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The relation with this oid.
    pub fn relation(&self, oid: u32) -> Option<&Relation> {
        self.relations.get(&oid)
    }

    /// Decodes one `XLogData` payload.
    pub fn decode(&mut self, mut data: Bytes) -> Result<Message, DecodeError> {
        if data.is_empty() {
            return Ok(Message::Other);
        }
        let tag = data.get_u8() as char;
        let mut r = Reader { data, tag };
        match tag {
            'B' => {
                let final_lsn = r.u64()?;
                let commit_time = r.i64()?;
                let xid = r.u32()?;
                Ok(Message::Begin {
                    final_lsn,
                    commit_time,
                    xid,
                })
            }
            'C' => {
                let _flags = r.u8()?;
                let _commit_lsn = r.u64()?;
                let end_lsn = r.u64()?;
                Ok(Message::Commit { end_lsn })
            }
            'R' => {
                let oid = r.u32()?;
                let schema = r.cstr()?;
                let table = r.cstr()?;
                let _replica_identity = r.u8()?;
                let n = r.u16()?;
                let mut columns = Vec::with_capacity(usize::from(n));
                for _ in 0..n {
                    let flags = r.u8()?;
                    let name = r.cstr()?;
                    let type_oid = r.u32()?;
                    let _typmod = r.i32()?;
                    columns.push(Column {
                        key: flags & 1 == 1,
                        name,
                        type_oid,
                    });
                }
                self.relations.insert(
                    oid,
                    Relation {
                        schema,
                        table,
                        columns,
                    },
                );
                Ok(Message::Other)
            }
            'I' => {
                let relation = self.known(r.u32()?)?;
                r.expect(b'N')?;
                let new = Some(r.tuple()?);
                Ok(Message::Row(RowChange {
                    operation: Operation::Insert,
                    relation,
                    new,
                    old: None,
                    old_is_full: false,
                }))
            }
            'U' => {
                let relation = self.known(r.u32()?)?;
                let mut old = None;
                let marker = r.u8()?;
                let old_is_full = marker == b'O';
                let marker = if marker == b'K' || marker == b'O' {
                    old = Some(r.tuple()?);
                    r.u8()?
                } else {
                    marker
                };
                if marker != b'N' {
                    return Err(DecodeError::Unexpected {
                        tag,
                        marker: marker as char,
                    });
                }
                let new = Some(r.tuple()?);
                Ok(Message::Row(RowChange {
                    operation: Operation::Update,
                    relation,
                    new,
                    old,
                    old_is_full,
                }))
            }
            'D' => {
                let relation = self.known(r.u32()?)?;
                let marker = r.u8()?;
                if marker != b'K' && marker != b'O' {
                    return Err(DecodeError::Unexpected {
                        tag,
                        marker: marker as char,
                    });
                }
                let old = Some(r.tuple()?);
                Ok(Message::Row(RowChange {
                    operation: Operation::Delete,
                    relation,
                    new: None,
                    old,
                    old_is_full: marker == b'O',
                }))
            }
            _ => Ok(Message::Other),
        }
    }

    fn known(&self, oid: u32) -> Result<u32, DecodeError> {
        if self.relations.contains_key(&oid) {
            Ok(oid)
        } else {
            Err(DecodeError::UnknownRelation { oid })
        }
    }
}

/// Reads big-endian fields, failing (not panicking) on a short message.
struct Reader {
    data: Bytes,
    tag: char,
}

impl Reader {
    fn need(&self, n: usize) -> Result<(), DecodeError> {
        if self.data.remaining() < n {
            Err(DecodeError::Truncated { tag: self.tag })
        } else {
            Ok(())
        }
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        self.need(1)?;
        Ok(self.data.get_u8())
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        self.need(2)?;
        Ok(self.data.get_u16())
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        self.need(4)?;
        Ok(self.data.get_u32())
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        self.need(4)?;
        Ok(self.data.get_i32())
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        self.need(8)?;
        Ok(self.data.get_u64())
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        self.need(8)?;
        Ok(self.data.get_i64())
    }
    fn expect(&mut self, marker: u8) -> Result<(), DecodeError> {
        let got = self.u8()?;
        if got == marker {
            Ok(())
        } else {
            Err(DecodeError::Unexpected {
                tag: self.tag,
                marker: got as char,
            })
        }
    }
    fn cstr(&mut self) -> Result<String, DecodeError> {
        let end = self
            .data
            .iter()
            .position(|b| *b == 0)
            .ok_or(DecodeError::Truncated { tag: self.tag })?;
        let text = String::from_utf8_lossy(&self.data[..end]).into_owned();
        self.data.advance(end + 1);
        Ok(text)
    }
    fn tuple(&mut self) -> Result<Vec<Cell>, DecodeError> {
        let n = self.u16()?;
        let mut cells = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            let cell = match self.u8()? {
                b'n' => Cell::Null,
                b'u' => Cell::Unchanged,
                b't' | b'b' => {
                    let len = self.u32()? as usize;
                    self.need(len)?;
                    Cell::Text(self.data.split_to(len))
                }
                other => {
                    return Err(DecodeError::Unexpected {
                        tag: self.tag,
                        marker: other as char,
                    })
                }
            };
            cells.push(cell);
        }
        Ok(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    fn relation_message() -> Bytes {
        let mut b = BytesMut::new();
        b.put_u8(b'R');
        b.put_u32(42);
        b.put_slice(b"public\0orders\0");
        b.put_u8(b'd');
        b.put_u16(2);
        b.put_u8(1);
        b.put_slice(b"id\0");
        b.put_u32(23);
        b.put_i32(-1);
        b.put_u8(0);
        b.put_slice(b"note\0");
        b.put_u32(25);
        b.put_i32(-1);
        b.freeze()
    }

    fn tuple(b: &mut BytesMut, id: &[u8], note: Option<&[u8]>) {
        b.put_u16(2);
        b.put_u8(b't');
        b.put_u32(id.len() as u32);
        b.put_slice(id);
        match note {
            Some(n) => {
                b.put_u8(b't');
                b.put_u32(n.len() as u32);
                b.put_slice(n);
            }
            None => b.put_u8(b'n'),
        }
    }

    #[test]
    fn relations_then_changes() {
        let mut d = Decoder::new();
        assert!(matches!(d.decode(relation_message()), Ok(Message::Other)));
        let rel = d.relation(42).unwrap();
        assert_eq!(
            (rel.schema.as_str(), rel.table.as_str()),
            ("public", "orders")
        );
        assert!(rel.columns[0].key && !rel.columns[1].key);

        let mut b = BytesMut::new();
        b.put_u8(b'U');
        b.put_u32(42);
        b.put_u8(b'K');
        tuple(&mut b, b"7", None);
        b.put_u8(b'N');
        tuple(&mut b, b"8", Some(b"hi"));
        let Ok(Message::Row(change)) = d.decode(b.freeze()) else {
            panic!("an update")
        };
        assert_eq!(change.operation, Operation::Update);
        assert_eq!(change.old.unwrap()[0], Cell::Text(Bytes::from_static(b"7")));
        assert_eq!(
            change.new.unwrap()[1],
            Cell::Text(Bytes::from_static(b"hi"))
        );
    }

    #[test]
    fn broken_input_is_an_error_not_a_panic() {
        let mut d = Decoder::new();
        let mut b = BytesMut::new();
        b.put_u8(b'I');
        b.put_u32(9);
        assert!(matches!(
            d.decode(b.freeze()),
            Err(DecodeError::UnknownRelation { oid: 9 })
        ));
        d.decode(relation_message()).unwrap();
        let mut b = BytesMut::new();
        b.put_u8(b'I');
        b.put_u32(42);
        b.put_u8(b'N');
        b.put_u16(1);
        b.put_u8(b't');
        b.put_u32(100);
        assert!(matches!(
            d.decode(b.freeze()),
            Err(DecodeError::Truncated { tag: 'I' })
        ));
        let mut b = BytesMut::new();
        b.put_u8(b'B');
        b.put_u32(1);
        assert!(matches!(
            d.decode(b.freeze()),
            Err(DecodeError::Truncated { .. })
        ));
    }
}
