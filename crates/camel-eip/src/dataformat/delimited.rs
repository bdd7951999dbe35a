//! The CSV data format: rows of a JSON-like value to and from delimited text.

use super::*;

pub(super) fn csv_unmarshal(f: &CsvFormat, text: &str) -> Result<Value, CamelError> {
    let (delimiter, quote) = csv_bytes(f)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .quote(quote)
        .trim(if f.trim {
            csv::Trim::All
        } else {
            csv::Trim::None
        })
        .from_reader(text.as_bytes());
    let mut names: Option<Vec<String>> = (!f.header.is_empty()).then(|| f.header.clone());
    let mut skip_first = f.skip_header_record || (f.use_maps && names.is_none());
    let mut checked = false;
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(&e))?;
        if skip_first {
            skip_first = false;
            if names.is_none() {
                names = Some(record.iter().map(str::to_string).collect());
            }
            continue;
        }
        if !checked {
            if let Some(names) = &names {
                check_column_names(f, names, record.position().map_or(1, |p| p.line()))?;
            }
            checked = true;
        }
        let row = match &names {
            None => Value::Array(record.iter().map(|s| Value::String(s.into())).collect()),
            Some(names) => {
                if record.len() > names.len() {
                    let line = record.position().map(|p| p.line()).unwrap_or(0);
                    return Err(CamelError::conversion(
                        "csv",
                        format!(
                            "line {line}: {} fields, but the header names {}",
                            record.len(),
                            names.len()
                        ),
                    ));
                }
                Value::Object(
                    names
                        .iter()
                        .zip(record.iter())
                        // A column without a name is left out (allowed by the check).
                        .filter(|(k, _)| !k.trim().is_empty())
                        .map(|(k, v)| (k.clone(), Value::String(v.into())))
                        .collect(),
                )
            }
        };
        rows.push(row);
    }
    Ok(Value::Array(rows))
}

/// Column names must not be empty unless `allow_missing_column_names`, as Commons CSV
/// (on which Camel's csv is built) requires of a header.
pub(super) fn check_column_names(
    f: &CsvFormat,
    names: &[String],
    line: u64,
) -> Result<(), CamelError> {
    if f.allow_missing_column_names {
        return Ok(());
    }
    match names.iter().position(|n| n.trim().is_empty()) {
        None => Ok(()),
        Some(i) => Err(CamelError::conversion(
            "csv",
            format!(
                "column {} of the header has no name (line {line}); set \
                 allow_missing_column_names to leave it out",
                i + 1
            ),
        )),
    }
}

pub(super) fn csv_error(e: &csv::Error) -> CamelError {
    let at = e
        .position()
        .map(|p| format!("line {}, byte {}: ", p.line(), p.byte()))
        .unwrap_or_default();
    CamelError::conversion("csv", format!("{at}{e}"))
}

pub(super) fn csv_bytes(f: &CsvFormat) -> Result<(u8, u8), CamelError> {
    let d = one_byte(&f.delimiter).map_err(|e| CamelError::conversion("csv", e))?;
    let q = one_byte(&f.quote).map_err(|e| CamelError::conversion("csv", e))?;
    Ok((d, q))
}

pub(super) fn csv_field(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn csv_marshal(f: &CsvFormat, value: &Value) -> Result<Body, CamelError> {
    let (delimiter, quote) = csv_bytes(f)?;
    let rows: &[Value] = match value {
        Value::Array(rows) => rows,
        Value::Null => &[],
        one => std::slice::from_ref(one),
    };
    // Columns of map rows: the given header, else the first map's keys.
    let columns: Vec<String> = if !f.header.is_empty() {
        f.header.clone()
    } else {
        rows.iter()
            .find_map(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut writer = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .quote(quote)
        .flexible(true)
        .from_writer(Vec::new());
    let write_err = |e: csv::Error| CamelError::conversion("csv", e);
    if !columns.is_empty() && !f.skip_header_record {
        writer.write_record(&columns).map_err(write_err)?;
    }
    for (i, row) in rows.iter().enumerate() {
        let fields: Vec<String> = match row {
            Value::Object(map) => {
                if let Some(extra) = map.keys().find(|k| !columns.contains(k)) {
                    return Err(CamelError::conversion(
                        "csv",
                        format!(
                            "row {i}: key `{extra}` is not a column ({})",
                            columns.join(", ")
                        ),
                    ));
                }
                columns
                    .iter()
                    .map(|c| map.get(c).map(csv_field).unwrap_or_default())
                    .collect()
            }
            Value::Array(items) => items.iter().map(csv_field).collect(),
            scalar => vec![csv_field(scalar)],
        };
        writer.write_record(&fields).map_err(write_err)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CamelError::conversion("csv", e.error()))?;
    let text = String::from_utf8(bytes).map_err(|e| CamelError::conversion("csv", e))?;
    Ok(Body::Text(text.into()))
}
