//! The data formats of `marshal`/`unmarshal`: JSON, CSV, XML, base64, gzip, zlib and
//! one-entry zip archives.
//!
//! Each format is a pair of functions over a [`Body`]: marshal turns a value into text or
//! bytes, unmarshal turns text or bytes back into a value. Bad input is a
//! [`CamelError::Conversion`] naming the format and the place (line, byte offset) where
//! the input went wrong.

use std::io::{Read, Write};
use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange};
use serde_json::{Map, Value};

use crate::config::{Base64Format, CsvFormat, DataFormat, JsonFormat, XmlFormat, ZipFormat};

mod delimited;
mod zip_file;
use delimited::{csv_field, csv_marshal, csv_unmarshal};

/// Marshals the exchange's body with `format`. Most formats read the body alone; `zipFile`
/// names its entry after the `CamelFileName` header and renames the header, as Camel.
pub fn marshal_exchange(format: &DataFormat, ex: &mut Exchange) -> Result<(), CamelError> {
    match format {
        DataFormat::ZipFile(f) => zip_file::marshal_exchange(f, ex),
        _ => {
            ex.message.body = marshal(format, &ex.message.body)?;
            Ok(())
        }
    }
}

/// Unmarshals the exchange's body with `format` (`zipFile` sets `CamelFileName` to the
/// entry's name).
pub fn unmarshal_exchange(format: &DataFormat, ex: &mut Exchange) -> Result<(), CamelError> {
    match format {
        DataFormat::ZipFile(f) => zip_file::unmarshal_exchange(f, ex),
        _ => {
            ex.message.body = unmarshal(format, &ex.message.body)?;
            Ok(())
        }
    }
}

/// Marshals `body` with `format` (a `zipFile` entry is named `data`: there is no
/// exchange to name it after).
pub fn marshal(format: &DataFormat, body: &Body) -> Result<Body, CamelError> {
    match format {
        DataFormat::Json(f) => json_marshal(f, body),
        DataFormat::Csv(f) => csv_marshal(f, &body_value(body, "csv")?),
        DataFormat::JacksonXml(f) => xml_marshal(f, &body_value(body, "xml")?),
        DataFormat::Base64(f) => Ok(base64_marshal(f, &body.to_bytes())),
        DataFormat::Gzip(_) => gzip_marshal(&body.to_bytes()),
        DataFormat::Zip(f) => zlib_marshal(f, &body.to_bytes()),
        DataFormat::ZipFile(_) => zip_file::marshal_body(&body.to_bytes()),
    }
}

/// Unmarshals `body` with `format`.
pub fn unmarshal(format: &DataFormat, body: &Body) -> Result<Body, CamelError> {
    match format {
        DataFormat::Json(f) => json_unmarshal(f, body),
        DataFormat::Csv(f) => Ok(json_body(csv_unmarshal(f, &body_text(body, "csv")?)?)),
        DataFormat::JacksonXml(_) => Ok(json_body(xml_unmarshal(&body_text(body, "xml")?)?)),
        DataFormat::Base64(f) => base64_unmarshal(f, &body.to_bytes()),
        DataFormat::Gzip(_) => gzip_unmarshal(&body.to_bytes()),
        DataFormat::Zip(_) => zlib_unmarshal(&body.to_bytes()),
        DataFormat::ZipFile(f) => zip_file::unmarshal_body(f, &body.to_bytes()),
    }
}

/// Checks options that only a run could otherwise reject (one-character delimiters…):
/// `Err((pointer below the format, reason))`.
pub fn check(format: &DataFormat) -> Result<(), (&'static str, String)> {
    match format {
        DataFormat::Csv(f) => {
            one_byte(&f.delimiter).map_err(|e| ("delimiter", e))?;
            one_byte(&f.quote).map_err(|e| ("quote", e))?;
            Ok(())
        }
        DataFormat::Zip(ZipFormat {
            compression_level: Some(level),
        }) if !(-1..=9).contains(level) => Err((
            "compression_level",
            format!("compression level {level} is not between 0 and 9 (or -1)"),
        )),
        DataFormat::Json(f) => {
            if let Some(t) = &f.unmarshal_type {
                if !t.is_string() {
                    return Err(("unmarshal_type", "a type name (Map, List…)".into()));
                }
            }
            Ok(())
        }
        DataFormat::ZipFile(f) => zip_file::check(f),
        _ => Ok(()),
    }
}

fn one_byte(text: &str) -> Result<u8, String> {
    match text.as_bytes() {
        [b] if b.is_ascii() => Ok(*b),
        _ => Err(format!("`{text}` is not one ASCII character")),
    }
}

fn json_body(value: Value) -> Body {
    Body::Json(Arc::new(value))
}

fn body_text(body: &Body, target: &'static str) -> Result<String, CamelError> {
    match body {
        Body::Empty => Ok(String::new()),
        Body::Text(s) => Ok(s.to_string()),
        Body::Bytes(b) => std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|e| CamelError::conversion(target, format!("the body is not UTF-8: {e}"))),
        Body::Json(_) => Err(CamelError::conversion(
            target,
            "the body is already a parsed value; unmarshal reads text",
        )),
    }
}

fn body_value(body: &Body, target: &'static str) -> Result<Value, CamelError> {
    body.to_json()
        .map_err(|e| CamelError::conversion(target, format!("the body is not a value: {e}")))
}

// ---- JSON ----

fn json_marshal(f: &JsonFormat, body: &Body) -> Result<Body, CamelError> {
    let json = match body {
        Body::Json(j) => (**j).clone(),
        Body::Empty => Value::Null,
        Body::Text(s) => Value::String(s.to_string()),
        Body::Bytes(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
    };
    let text = if f.pretty_print {
        serde_json::to_string_pretty(&json)
    } else {
        serde_json::to_string(&json)
    }
    .map_err(|e| CamelError::conversion("json", e))?;
    Ok(Body::Text(text.into()))
}

/// What `unmarshal_type` asks of the parsed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Map,
    List,
}

fn shape_of(name: &str) -> Option<Shape> {
    let short = name.rsplit('.').next().unwrap_or(name);
    match short.to_ascii_lowercase().as_str() {
        "map" | "hashmap" | "linkedhashmap" | "treemap" | "object" | "jsonobject" => {
            Some(Shape::Map)
        }
        "list" | "arraylist" | "linkedlist" | "array" | "jsonarray" => Some(Shape::List),
        _ => None,
    }
}

fn json_unmarshal(f: &JsonFormat, body: &Body) -> Result<Body, CamelError> {
    let value = match body {
        Body::Json(j) => Arc::clone(j),
        other => Arc::new(other.to_json()?),
    };
    let wanted = f
        .unmarshal_type
        .as_ref()
        .and_then(Value::as_str)
        .and_then(shape_of);
    if f.use_list {
        // Camel's `useList`: a list, each element of the `unmarshal_type` when one is given.
        let Value::Array(items) = &*value else {
            return Err(CamelError::conversion(
                "json",
                format!("use_list asks for a list, the document is {}", kind(&value)),
            ));
        };
        if let Some((i, item)) = items
            .iter()
            .enumerate()
            .find(|(_, item)| wanted == Some(Shape::Map) && !item.is_object())
        {
            return Err(CamelError::conversion(
                "json",
                format!(
                    "use_list with unmarshal_type Map: element {i} is {}",
                    kind(item)
                ),
            ));
        }
        return Ok(Body::Json(value));
    }
    match (wanted, &*value) {
        (Some(Shape::Map), v) if !v.is_object() => Err(CamelError::conversion(
            "json",
            format!("unmarshal_type asks for a map, the document is {}", kind(v)),
        )),
        (Some(Shape::List), v) if !v.is_array() => Err(CamelError::conversion(
            "json",
            format!(
                "unmarshal_type asks for a list, the document is {}",
                kind(v)
            ),
        )),
        _ => Ok(Body::Json(value)),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

// ---- XML ----

use camel_api::nesting::{TooDeep, MAX_NESTING_DEPTH};

/// An element being read: its attributes and children so far, and its text.
struct Frame {
    name: String,
    fields: Map<String, Value>,
    text: String,
}

impl Frame {
    fn open(e: &quick_xml::events::BytesStart<'_>) -> Result<Self, String> {
        let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let mut fields = Map::new();
        for attr in e.attributes() {
            let attr = attr.map_err(|err| format!("element <{name}>: {err}"))?;
            let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
            let value = attr
                .unescape_value()
                .map_err(|err| format!("element <{name}> attribute `{key}`: {err}"))?;
            fields.insert(key, Value::String(value.into_owned()));
        }
        Ok(Frame {
            name,
            fields,
            text: String::new(),
        })
    }

    fn close(self) -> (String, Value) {
        let value = if self.fields.is_empty() {
            Value::String(self.text)
        } else {
            let mut fields = self.fields;
            if !self.text.is_empty() {
                fields.insert(String::new(), Value::String(self.text));
            }
            Value::Object(fields)
        };
        (self.name, value)
    }
}

/// Adds a child element's value; a name seen again turns into a list.
fn add_child(fields: &mut Map<String, Value>, name: String, value: Value) {
    match fields.get_mut(&name) {
        None => {
            fields.insert(name, value);
        }
        Some(Value::Array(items)) => items.push(value),
        Some(first) => {
            let first = std::mem::take(first);
            fields.insert(name, Value::Array(vec![first, value]));
        }
    }
}

/// XML text to a value: the root element's content (its name is dropped, as Jackson
/// does). See `docs/dataformats.md` for the mapping.
pub fn xml_unmarshal(text: &str) -> Result<Value, CamelError> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Value> = None;
    let at = |reader: &quick_xml::Reader<&[u8]>, what: String| {
        CamelError::conversion("xml", format!("byte {}: {what}", reader.buffer_position()))
    };
    loop {
        let event = reader.read_event().map_err(|e| {
            CamelError::conversion("xml", format!("byte {}: {e}", reader.error_position()))
        })?;
        let closed = match event {
            Event::Start(e) => {
                if root.is_some() {
                    return Err(at(&reader, "a second root element".into()));
                }
                // The stack is a loop's, but the value it builds is a tree that serde
                // drops and writes recursively: bound it like every other parsed body.
                if stack.len() == MAX_NESTING_DEPTH {
                    let too_deep = TooDeep::at(reader.buffer_position() as usize);
                    return Err(CamelError::conversion("xml", too_deep));
                }
                stack.push(Frame::open(&e).map_err(|m| at(&reader, m))?);
                None
            }
            Event::Empty(e) => {
                if root.is_some() {
                    return Err(at(&reader, "a second root element".into()));
                }
                Some(Frame::open(&e).map_err(|m| at(&reader, m))?.close())
            }
            Event::End(_) => stack.pop().map(Frame::close),
            Event::Text(t) => {
                let t = t.unescape().map_err(|e| at(&reader, e.to_string()))?;
                match stack.last_mut() {
                    Some(frame) => frame.text.push_str(&t),
                    None if t.trim().is_empty() => {}
                    None => return Err(at(&reader, "text outside the root element".into())),
                }
                None
            }
            Event::CData(c) => {
                let t = String::from_utf8_lossy(&c.into_inner()).into_owned();
                match stack.last_mut() {
                    Some(frame) => frame.text.push_str(&t),
                    None => return Err(at(&reader, "CDATA outside the root element".into())),
                }
                None
            }
            Event::Eof => break,
            // Declarations, comments, processing instructions, DOCTYPE: no data.
            _ => None,
        };
        if let Some((name, value)) = closed {
            match stack.last_mut() {
                Some(parent) => add_child(&mut parent.fields, name, value),
                None => root = Some(value),
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(at(
            &reader,
            format!("element <{}> is not closed", open.name),
        ));
    }
    root.ok_or_else(|| CamelError::conversion("xml", "no root element"))
}

fn xml_name(name: &str) -> Result<&str, CamelError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    if ok {
        Ok(name)
    } else {
        Err(CamelError::conversion(
            "xml",
            format!("key `{name}` is not an XML element name"),
        ))
    }
}

fn xml_write<W: Write>(
    w: &mut quick_xml::Writer<W>,
    name: &str,
    value: &Value,
) -> Result<(), CamelError> {
    use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
    let io = |e: std::io::Error| CamelError::conversion("xml", e);
    let name = xml_name(name)?;
    match value {
        Value::Array(items) => {
            for item in items {
                xml_write(w, name, item)?;
            }
            return Ok(());
        }
        Value::Null => {
            return w
                .write_event(Event::Empty(BytesStart::new(name)))
                .map_err(io);
        }
        _ => {}
    }
    w.write_event(Event::Start(BytesStart::new(name)))
        .map_err(io)?;
    match value {
        Value::Object(fields) => {
            for (key, child) in fields {
                if key.is_empty() {
                    w.write_event(Event::Text(BytesText::new(&csv_field(child))))
                        .map_err(io)?;
                } else {
                    xml_write(w, key, child)?;
                }
            }
        }
        scalar => {
            w.write_event(Event::Text(BytesText::new(&csv_field(scalar))))
                .map_err(io)?;
        }
    }
    w.write_event(Event::End(BytesEnd::new(name))).map_err(io)
}

fn xml_marshal(f: &XmlFormat, value: &Value) -> Result<Body, CamelError> {
    let root = f.root_name.as_deref().unwrap_or("root");
    // A list has no element name of its own: its items are `<item>` elements under the
    // root, as Jackson writes a `List`.
    let wrapped;
    let value = if value.is_array() {
        wrapped = Value::Object(Map::from_iter([("item".to_string(), value.clone())]));
        &wrapped
    } else {
        value
    };
    let mut writer = if f.pretty_print {
        quick_xml::Writer::new_with_indent(Vec::new(), b' ', 2)
    } else {
        quick_xml::Writer::new(Vec::new())
    };
    xml_write(&mut writer, root, value)?;
    let text =
        String::from_utf8(writer.into_inner()).map_err(|e| CamelError::conversion("xml", e))?;
    Ok(Body::Text(text.into()))
}

// ---- base64 ----

fn base64_engine(f: &Base64Format) -> base64::engine::GeneralPurpose {
    use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
    let config = GeneralPurposeConfig::new()
        .with_encode_padding(!f.url_safe)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let alphabet = if f.url_safe {
        &base64::alphabet::URL_SAFE
    } else {
        &base64::alphabet::STANDARD
    };
    base64::engine::GeneralPurpose::new(alphabet, config)
}

fn base64_marshal(f: &Base64Format, bytes: &[u8]) -> Body {
    use base64::Engine;
    let text = base64_engine(f).encode(bytes);
    if f.line_length == 0 || text.len() <= f.line_length {
        return Body::Text(text.into());
    }
    let separator = f.line_separator.as_deref().unwrap_or("\r\n");
    // Base64 text is ASCII, so byte chunks are whole characters.
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(f.line_length)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    Body::Text(lines.join(separator).into())
}

fn base64_unmarshal(f: &Base64Format, bytes: &[u8]) -> Result<Body, CamelError> {
    use base64::Engine;
    let compact: Vec<u8> = bytes
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let decoded = base64_engine(f).decode(&compact).map_err(|e| {
        CamelError::conversion(
            "base64",
            format!("{e} (offsets count characters other than line breaks)"),
        )
    })?;
    Ok(Body::Bytes(decoded.into()))
}

// ---- gzip and zlib ----

fn gzip_marshal(bytes: &[u8]) -> Result<Body, CamelError> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes)
        .and_then(|()| enc.finish())
        .map(|out| Body::Bytes(out.into()))
        .map_err(|e| CamelError::conversion("gzip", e))
}

fn zlib_marshal(f: &ZipFormat, bytes: &[u8]) -> Result<Body, CamelError> {
    let level = match f.compression_level {
        Some(l @ 0..=9) => flate2::Compression::new(l.unsigned_abs()),
        _ => flate2::Compression::default(),
    };
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), level);
    enc.write_all(bytes)
        .and_then(|()| enc.finish())
        .map(|out| Body::Bytes(out.into()))
        .map_err(|e| CamelError::conversion("zlib", e))
}

/// The most bytes a `gzip`/`zlib` unmarshal produces: a few megabytes of compressed zeros
/// from a sender would otherwise inflate to gigabytes.
pub const MAX_INFLATED_LEN: usize = 64 << 20;

fn inflate(target: &'static str, reader: impl Read, input_len: usize) -> Result<Body, CamelError> {
    inflate_bounded(target, reader, input_len, MAX_INFLATED_LEN)
}

/// Reads `reader` to its end, failing once it yields more than `bound` bytes.
fn inflate_bounded(
    target: &'static str,
    reader: impl Read,
    input_len: usize,
    bound: usize,
) -> Result<Body, CamelError> {
    let mut out = Vec::new();
    let limit = u64::try_from(bound).unwrap_or(u64::MAX);
    // Inflating up to the bound takes a while; keep the worker's other tasks going.
    let read = camel_api::blocking::in_place(|| reader.take(limit + 1).read_to_end(&mut out));
    if out.len() > bound {
        return Err(CamelError::conversion(
            target,
            format!("the input of {input_len} bytes inflates to more than {bound} bytes"),
        ));
    }
    read.map_err(|e| {
        CamelError::conversion(
            target,
            format!(
                "{e} (input of {input_len} bytes, {} bytes decompressed before the error)",
                out.len()
            ),
        )
    })?;
    Ok(Body::Bytes(out.into()))
}

fn gzip_unmarshal(bytes: &[u8]) -> Result<Body, CamelError> {
    inflate("gzip", flate2::read::GzDecoder::new(bytes), bytes.len())
}

fn zlib_unmarshal(bytes: &[u8]) -> Result<Body, CamelError> {
    inflate("zlib", flate2::read::ZlibDecoder::new(bytes), bytes.len())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn text(b: &Body) -> String {
        b.as_text().map(|t| t.into_owned()).unwrap_or_default()
    }

    fn value(b: &Body) -> Value {
        b.to_json().unwrap()
    }

    fn err_text(r: Result<Body, CamelError>) -> String {
        match r {
            Err(e @ CamelError::Conversion { .. }) => e.to_string(),
            other => panic!("expected a conversion error, got {other:?}"),
        }
    }

    #[test]
    fn csv_rows_as_lists_without_a_header() {
        let f = DataFormat::Csv(DataFormat::csv());
        let out = unmarshal(&f, &Body::from("a,b\n1,\"x,y\"\n")).unwrap();
        assert_eq!(value(&out), json!([["a", "b"], ["1", "x,y"]]));
        let back = marshal(&f, &out).unwrap();
        assert_eq!(text(&back), "a,b\n1,\"x,y\"\n");
    }

    #[test]
    fn csv_use_maps_reads_the_first_line_as_header() {
        let f = DataFormat::Csv(DataFormat::csv().use_maps(true));
        let out = unmarshal(&f, &Body::from("id,name\n1,ann\n2,bob\n")).unwrap();
        assert_eq!(
            value(&out),
            json!([{"id": "1", "name": "ann"}, {"id": "2", "name": "bob"}])
        );
        // Marshalling maps writes the header line first (columns in key order).
        assert_eq!(text(&marshal(&f, &out).unwrap()), "id,name\n1,ann\n2,bob\n");
    }

    #[test]
    fn csv_given_header_delimiter_quote_trim_and_skip() {
        let f = DataFormat::Csv(
            DataFormat::csv()
                .header(["n", "v"])
                .delimiter(';')
                .quote('\'')
                .trim(true)
                .skip_header_record(true),
        );
        let out = unmarshal(&f, &Body::from("x;y\n a ;'b;c'\n")).unwrap();
        assert_eq!(value(&out), json!([{"n": "a", "v": "b;c"}]));
        // Marshal with skip_header_record omits the header line; the column order is the
        // given header's.
        let rows = Body::Json(Arc::new(json!([{"v": "2;3", "n": 1}])));
        assert_eq!(text(&marshal(&f, &rows).unwrap()), "1;'2;3'\n");
    }

    #[test]
    fn csv_marshal_header_for_list_rows_and_nested_values() {
        let f = DataFormat::Csv(DataFormat::csv().header(["a", "b"]));
        let rows = Body::Json(Arc::new(json!([[1, null], [true, {"k": 1}]])));
        assert_eq!(
            text(&marshal(&f, &rows).unwrap()),
            "a,b\n1,\ntrue,\"{\"\"k\"\":1}\"\n"
        );
    }

    #[test]
    fn csv_bad_input_says_where() {
        let f = DataFormat::Csv(DataFormat::csv().header(["a"]));
        let e = err_text(unmarshal(&f, &Body::from("1\n2,3\n")));
        assert!(e.contains("line 2") && e.contains("2 fields"), "{e}");
        let f = DataFormat::Csv(DataFormat::csv());
        let e = err_text(unmarshal(&f, &Body::from(vec![0xff, b',', b'a'])));
        assert!(e.contains("UTF-8"), "{e}");
        let rows = Body::Json(Arc::new(json!([{"a": 1}, {"b": 2}])));
        let e = err_text(marshal(&f, &rows));
        assert!(e.contains("row 1") && e.contains("`b`"), "{e}");
    }

    #[test]
    fn csv_options_are_checked_before_running() {
        let f = DataFormat::Csv(DataFormat::csv().delimiter('é'));
        assert_eq!(check(&f).unwrap_err().0, "delimiter");
        let mut c = DataFormat::csv();
        c.quote = "''".into();
        assert_eq!(check(&DataFormat::Csv(c)).unwrap_err().0, "quote");
    }

    #[test]
    fn xml_maps_attributes_repeats_and_text() {
        let xml = r#"<?xml version="1.0"?>
            <order id="7">
              <!-- a comment -->
              <item sku="a">two &amp; more</item>
              <item>plain</item>
              <note/>
              <total>12.5</total>
              <raw><![CDATA[<x>]]></raw>
            </order>"#;
        let f = DataFormat::JacksonXml(DataFormat::xml());
        let out = unmarshal(&f, &Body::from(xml)).unwrap();
        assert_eq!(
            value(&out),
            json!({
                "id": "7",
                "item": [{"sku": "a", "": "two & more"}, "plain"],
                "note": "",
                "total": "12.5",
                "raw": "<x>"
            })
        );
    }

    #[test]
    fn xml_marshal_writes_elements_under_the_root() {
        let f = DataFormat::JacksonXml(DataFormat::xml().root_name("order"));
        let body = Body::Json(Arc::new(
            json!({"id": 7, "item": ["a", "b<c"], "note": null, "x": {"": "t", "y": true}}),
        ));
        let out = text(&marshal(&f, &body).unwrap());
        assert_eq!(
            out,
            "<order><id>7</id><item>a</item><item>b&lt;c</item><note/><x>t<y>true</y></x></order>"
        );
        // And back: element text is a string.
        let back = value(&unmarshal(&f, &Body::from(out)).unwrap());
        assert_eq!(
            back,
            json!({"id": "7", "item": ["a", "b<c"], "note": "", "x": {"": "t", "y": "true"}})
        );
    }

    #[test]
    fn an_inflation_bomb_stops_at_the_bound() {
        let zeros = vec![0u8; MAX_INFLATED_LEN + 1];
        let Body::Bytes(bomb) = gzip_marshal(&zeros).unwrap() else {
            panic!("gzip gives bytes")
        };
        assert!(bomb.len() < 1 << 20, "{} compressed bytes", bomb.len());
        let err = gzip_unmarshal(&bomb).unwrap_err().to_string();
        assert!(err.contains("inflates to more than"), "{err}");
        let Body::Bytes(fine) = gzip_marshal(&zeros[..1000]).unwrap() else {
            panic!("gzip gives bytes")
        };
        assert_eq!(gzip_unmarshal(&fine).unwrap().to_bytes().len(), 1000);
    }

    #[test]
    fn xml_nested_deeper_than_the_limit_is_an_error() {
        let deep = format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
        let err = xml_unmarshal(&deep).unwrap_err().to_string();
        assert!(err.contains("deeper than 128"), "{err}");
        let ok = format!("{}x{}", "<a>".repeat(128), "</a>".repeat(128));
        assert!(xml_unmarshal(&ok).is_ok());
    }

    #[test]
    fn xml_bad_input_says_where() {
        let f = DataFormat::JacksonXml(DataFormat::xml());
        for (bad, want) in [
            ("<a><b></a>", "byte"),
            ("<a>", "not closed"),
            ("<a/><b/>", "second root"),
            ("", "no root element"),
            ("<a x='1' x='2'/>", "byte"),
        ] {
            let e = err_text(unmarshal(&f, &Body::from(bad)));
            assert!(e.contains(want), "{bad}: {e}");
        }
        let e = err_text(marshal(&f, &Body::Json(Arc::new(json!({"a b": 1})))));
        assert!(e.contains("`a b`"), "{e}");
        // A list's items become `<item>` elements under the root.
        let out = marshal(&f, &Body::Json(Arc::new(json!([1, {"a": 2}])))).unwrap();
        assert_eq!(
            text(&out),
            "<root><item>1</item><item><a>2</a></item></root>"
        );
    }

    #[test]
    fn base64_options() {
        let plain = DataFormat::Base64(DataFormat::base64());
        assert_eq!(
            text(&marshal(&plain, &Body::from("hello?>")).unwrap()),
            "aGVsbG8/Pg=="
        );
        let url = DataFormat::Base64(DataFormat::base64().url_safe(true));
        let enc = marshal(&url, &Body::from("hello?>")).unwrap();
        assert_eq!(text(&enc), "aGVsbG8_Pg");
        assert_eq!(unmarshal(&url, &enc).unwrap().to_bytes(), &b"hello?>"[..]);
        let lines = DataFormat::Base64(DataFormat::base64().line_length(4));
        let enc = marshal(&lines, &Body::from("hello?>")).unwrap();
        assert_eq!(text(&enc), "aGVs\r\nbG8/\r\nPg==");
        assert_eq!(unmarshal(&lines, &enc).unwrap().to_bytes(), &b"hello?>"[..]);
    }

    #[test]
    fn base64_bad_input_says_where() {
        let f = DataFormat::Base64(DataFormat::base64());
        let e = err_text(unmarshal(&f, &Body::from("aGV!bG8=")));
        assert!(e.contains("offset 3"), "{e}");
    }

    #[test]
    fn gzip_and_zlib_bad_input() {
        for f in [
            DataFormat::Gzip(DataFormat::gzip()),
            DataFormat::Zip(DataFormat::zip()),
        ] {
            let e = err_text(unmarshal(&f, &Body::from("not compressed at all")));
            assert!(e.contains("input of 21 bytes"), "{e}");
            // A truncated stream fails too.
            let whole = marshal(&f, &Body::from("some text to squeeze"))
                .unwrap()
                .to_bytes();
            let cut = Body::from(whole[..whole.len() / 2].to_vec());
            err_text(unmarshal(&f, &cut));
        }
    }

    #[test]
    fn zlib_is_a_zlib_stream_not_a_zip_archive() {
        let f = DataFormat::Zip(ZipFormat {
            compression_level: Some(9),
        });
        let out = marshal(&f, &Body::from("aaaa")).unwrap().to_bytes();
        assert_eq!(out[0], 0x78, "zlib header");
        assert!(check(&DataFormat::Zip(ZipFormat {
            compression_level: Some(12)
        }))
        .is_err());
    }

    #[test]
    fn json_marshal_writes_a_json_number_as_a_number() {
        // What `set_body: {jsonpath: "$.v"}` hands on once the body keeps the number as
        // JSON (the text "1" is a JSON string, as Camel's Jackson writes a String).
        let f = DataFormat::Json(DataFormat::json());
        assert_eq!(
            text(&marshal(&f, &Body::Json(Arc::new(json!(1)))).unwrap()),
            "1"
        );
        assert_eq!(text(&marshal(&f, &Body::from("1")).unwrap()), r#""1""#);
    }

    #[test]
    fn json_use_list_asks_for_a_list() {
        let list = DataFormat::Json(DataFormat::json().use_list(true));
        let out = unmarshal(&list, &Body::from(r#"[{"a":1},{"a":2}]"#)).unwrap();
        assert_eq!(value(&out), json!([{"a": 1}, {"a": 2}]));
        let e = err_text(unmarshal(&list, &Body::from(r#"{"a":1}"#)));
        assert!(
            e.contains("use_list asks for a list") && e.contains("a map"),
            "{e}"
        );
        let maps = DataFormat::Json(DataFormat::json().use_list(true).unmarshal_type("Map"));
        let e = err_text(unmarshal(&maps, &Body::from(r#"[{"a":1}, 2]"#)));
        assert!(e.contains("element 1 is a number"), "{e}");
        // Without options any document is read, a list included.
        let plain = DataFormat::Json(DataFormat::json());
        assert_eq!(
            value(&unmarshal(&plain, &Body::from("[1]")).unwrap()),
            json!([1])
        );
        // Camel's spelling.
        let f: crate::config::JsonFormat =
            serde_json::from_value(json!({"useList": true})).unwrap();
        assert!(f.use_list);
    }

    #[test]
    fn csv_header_as_text_and_missing_column_names() {
        let f: CsvFormat = serde_json::from_value(json!({"header": "id, name"})).unwrap();
        assert_eq!(f.header, ["id", "name"]);
        let f: CsvFormat = serde_json::from_value(json!({"header": ["id", "name"]})).unwrap();
        assert_eq!(f.header, ["id", "name"]);
        let e = serde_json::from_value::<CsvFormat>(json!({"header": {"a": 1}})).unwrap_err();
        assert!(e.to_string().contains("comma-separated"), "{e}");
        let maps = DataFormat::Csv(DataFormat::csv().use_maps(true));
        let e = err_text(unmarshal(
            &maps,
            &Body::from(
                "id,,name
1,x,ann
",
            ),
        ));
        assert!(e.contains("column 2 of the header has no name"), "{e}");
        let f: CsvFormat =
            serde_json::from_value(json!({"useMaps": true, "allowMissingColumnNames": true}))
                .unwrap();
        let out = unmarshal(
            &DataFormat::Csv(f),
            &Body::from(
                "id,,name
1,x,ann
",
            ),
        )
        .unwrap();
        assert_eq!(value(&out), json!([{"id": "1", "name": "ann"}]));
        let given = DataFormat::Csv(DataFormat::csv().header(["a", ""]));
        assert!(err_text(unmarshal(
            &given,
            &Body::from(
                "1,2
"
            )
        ))
        .contains("no name"));
    }

    #[test]
    fn json_unmarshal_type_checks_map_or_list() {
        let map = DataFormat::Json(DataFormat::json().unmarshal_type("java.util.Map"));
        assert!(unmarshal(&map, &Body::from(r#"{"a":1}"#)).is_ok());
        let e = err_text(unmarshal(&map, &Body::from("[1]")));
        assert!(e.contains("a map") && e.contains("a list"), "{e}");
        let list = DataFormat::Json(DataFormat::json().unmarshal_type("List"));
        assert!(unmarshal(&list, &Body::from("[1]")).is_ok());
        assert!(unmarshal(&list, &Body::from("3")).is_err());
        // A Java class name we cannot check is accepted.
        let other = DataFormat::Json(DataFormat::json().unmarshal_type("com.acme.Order"));
        assert!(unmarshal(&other, &Body::from("3")).is_ok());
    }

    fn csv_cell() -> impl Strategy<Value = String> {
        // Any text, including delimiters, quotes and line breaks, which must be quoted.
        proptest::string::string_regex("[a-z0-9 ,;\"'\n\r\u{e9}]{0,8}").unwrap()
    }

    proptest! {
        #[test]
        fn csv_round_trips_lists(rows in proptest::collection::vec(
            proptest::collection::vec(csv_cell(), 2..4), 1..6),
            semicolon in any::<bool>()) {
            let mut c = DataFormat::csv();
            if semicolon {
                c = c.delimiter(';');
            }
            let f = DataFormat::Csv(c);
            // One empty field on a line is written as an empty line, which a reader skips:
            // rows have at least two fields here.
            let json = Value::Array(rows.iter().map(|r| {
                Value::Array(r.iter().map(|s| Value::String(s.clone())).collect())
            }).collect());
            let text = marshal(&f, &Body::Json(Arc::new(json.clone()))).unwrap();
            let back = unmarshal(&f, &text).unwrap();
            prop_assert_eq!(value(&back), json);
        }

        #[test]
        fn base64_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..200),
            url_safe in any::<bool>(), line_length in 0usize..80) {
            let f = DataFormat::Base64(DataFormat::base64().url_safe(url_safe).line_length(line_length));
            let enc = marshal(&f, &Body::from(bytes.clone())).unwrap();
            prop_assert_eq!(unmarshal(&f, &enc).unwrap().to_bytes(), &bytes[..]);
        }

        #[test]
        fn gzip_and_zlib_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            for f in [DataFormat::Gzip(DataFormat::gzip()), DataFormat::Zip(DataFormat::zip())] {
                let enc = marshal(&f, &Body::from(bytes.clone())).unwrap();
                prop_assert_eq!(unmarshal(&f, &enc).unwrap().to_bytes(), &bytes[..]);
            }
        }
    }
}
