//! Column values as JSON: pgoutput sends each value's text form, and the column's type
//! says how to read it.
//!
//! Booleans, integers and finite floats become JSON booleans and numbers; `json` and
//! `jsonb` become the document they hold; everything else (`numeric` included, whose
//! precision a JSON number would not keep) stays text. A TOASTed value an update did
//! not change is not sent by the server and is left out of the object.

use serde_json::{Map, Number, Value};

use crate::pgoutput::{Cell, Column};

const BOOL: u32 = 16;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const OID: u32 = 26;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const JSON: u32 = 114;
const JSONB: u32 = 3802;

/// One value's text as JSON, by its type.
pub fn to_json(type_oid: u32, text: &str) -> Value {
    match type_oid {
        BOOL => Value::Bool(text == "t"),
        INT2 | INT4 | INT8 | OID => text
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.to_string())),
        FLOAT4 | FLOAT8 => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(text.to_string())),
        JSON | JSONB => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
        }
        _ => Value::String(text.to_string()),
    }
}

/// A tuple as a JSON object, column name → value. `keys_only` keeps the replica
/// identity's columns (the old key of an update or delete sent as `K`).
pub fn row(columns: &[Column], cells: &[Cell], keys_only: bool) -> Value {
    let mut object = Map::with_capacity(columns.len());
    for (column, cell) in columns.iter().zip(cells) {
        if keys_only && !column.key {
            continue;
        }
        let value = match cell {
            Cell::Null => Value::Null,
            Cell::Unchanged => continue,
            Cell::Text(bytes) => to_json(column.type_oid, &String::from_utf8_lossy(bytes)),
        };
        object.insert(column.name.clone(), value);
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use serde_json::json;

    #[test]
    fn types_read_as_json() {
        assert_eq!(to_json(BOOL, "t"), json!(true));
        assert_eq!(
            to_json(INT8, "-9007199254740993"),
            json!(-9007199254740993i64)
        );
        assert_eq!(to_json(FLOAT8, "1.5"), json!(1.5));
        assert_eq!(to_json(FLOAT8, "NaN"), json!("NaN"));
        assert_eq!(to_json(JSONB, r#"{"a": [1]}"#), json!({"a": [1]}));
        assert_eq!(to_json(1700, "12.3400"), json!("12.3400"));
    }

    #[test]
    fn rows_skip_unchanged_toast_and_non_keys_when_asked() {
        let columns = vec![
            Column {
                key: true,
                name: "id".into(),
                type_oid: INT4,
            },
            Column {
                key: false,
                name: "doc".into(),
                type_oid: 25,
            },
            Column {
                key: false,
                name: "gone".into(),
                type_oid: 25,
            },
        ];
        let cells = vec![
            Cell::Text(Bytes::from_static(b"3")),
            Cell::Unchanged,
            Cell::Null,
        ];
        assert_eq!(row(&columns, &cells, false), json!({"id": 3, "gone": null}));
        assert_eq!(row(&columns, &cells, true), json!({"id": 3}));
    }
}
