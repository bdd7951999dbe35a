//! Camel's `zipFile` data format: a zip archive holding one entry.
//!
//! Marshal deflates the body into an archive whose one entry is named after the
//! `CamelFileName` header (its last part unless `preserve_path_elements`; the exchange id
//! without the header) and leaves `CamelFileName` as the old name plus `.zip`, as Camel
//! does. Unmarshal reads an archive of exactly one entry: the body becomes the entry's
//! bytes and `CamelFileName` its name. An archive of several entries is refused, as
//! Camel refuses it without `usingIterator`. Inflation stops at a bound (at most
//! [`MAX_INFLATED_LEN`](super::MAX_INFLATED_LEN)) so a small archive cannot fill memory.

use std::io::{Cursor, Write};

use camel_api::{names::FILE_NAME, Body, CamelError, Exchange, Value};

use crate::config::ZipFileFormat;

const TARGET: &str = "zipFile";

/// Marshals the exchange's body into a one-entry archive and renames `CamelFileName`.
pub(super) fn marshal_exchange(f: &ZipFileFormat, ex: &mut Exchange) -> Result<(), CamelError> {
    let path = match ex.message.header(FILE_NAME) {
        Some(Value::Null) | None => ex.id.to_string(),
        Some(v) => v.to_string(),
    };
    let entry = entry_name(f, &path);
    ex.message.body = Body::Bytes(archive(&entry, &ex.message.body.to_bytes())?.into());
    ex.message
        .headers
        .insert(FILE_NAME, Value::from(format!("{path}.zip")));
    Ok(())
}

/// Unmarshals a one-entry archive; `CamelFileName` becomes the entry's name.
pub(super) fn unmarshal_exchange(f: &ZipFileFormat, ex: &mut Exchange) -> Result<(), CamelError> {
    let (name, body) = unpack(f, &ex.message.body.to_bytes())?;
    ex.message.body = body;
    ex.message.headers.insert(FILE_NAME, Value::from(name));
    Ok(())
}

/// Marshals a body alone (no exchange to name the entry after): the entry is `data`.
pub(super) fn marshal_body(bytes: &[u8]) -> Result<Body, CamelError> {
    Ok(Body::Bytes(archive("data", bytes)?.into()))
}

/// Unmarshals a body alone: the entry's bytes.
pub(super) fn unmarshal_body(f: &ZipFileFormat, bytes: &[u8]) -> Result<Body, CamelError> {
    unpack(f, bytes).map(|(_, body)| body)
}

/// The load-time check: what camel-rs does not do yet.
pub(super) fn check(f: &ZipFileFormat) -> Result<(), (&'static str, String)> {
    if f.using_iterator {
        return Err((
            "using_iterator",
            "Camel's `usingIterator` (an archive of several entries read one by one) is not \
             supported yet; an archive of one entry is read without it"
                .into(),
        ));
    }
    Ok(())
}

fn entry_name(f: &ZipFileFormat, path: &str) -> String {
    if f.preserve_path_elements {
        return path.to_string();
    }
    path.rsplit(['/', '\\'])
        .find(|part| !part.is_empty())
        .unwrap_or(path)
        .to_string()
}

fn archive(entry: &str, bytes: &[u8]) -> Result<Vec<u8>, CamelError> {
    let fail = |e: &dyn std::fmt::Display| CamelError::conversion(TARGET, e.to_string());
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        // Bodies of 4 GiB and more need ZIP64 records; smaller ones keep the plain form
        // every reader takes.
        .large_file(u32::try_from(bytes.len()).is_err());
    writer.start_file(entry, options).map_err(|e| fail(&e))?;
    writer.write_all(bytes).map_err(|e| fail(&e))?;
    let out = writer.finish().map_err(|e| fail(&e))?;
    Ok(out.into_inner())
}

fn unpack(f: &ZipFileFormat, bytes: &[u8]) -> Result<(String, Body), CamelError> {
    let fail = |message: String| CamelError::conversion(TARGET, message);
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        fail(format!(
            "the input of {} bytes is not a zip archive: {e}",
            bytes.len()
        ))
    })?;
    match archive.len() {
        1 => {}
        0 => return Err(fail("the zip archive has no entry".into())),
        n => {
            return Err(fail(format!(
                "the zip archive has {n} entries; zipFile reads an archive of one entry"
            )))
        }
    }
    let limit = bound(f);
    let entry = archive
        .by_index(0)
        .map_err(|e| fail(format!("entry 1 cannot be read: {e}")))?;
    let name = entry
        .name()
        .map_err(|e| fail(format!("entry 1 has a name that cannot be read: {e}")))?
        .into_owned();
    let body = super::inflate_bounded(TARGET, entry, bytes.len(), limit)?;
    Ok((name, body))
}

/// The inflation bound: the format's `max_decompressed_size` within the crate-wide one.
fn bound(f: &ZipFileFormat) -> usize {
    match f.max_decompressed_size {
        Some(n) if n >= 0 => usize::try_from(n)
            .unwrap_or(usize::MAX)
            .min(super::MAX_INFLATED_LEN),
        _ => super::MAX_INFLATED_LEN,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            w.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn marshal_names_the_entry_after_the_file_and_renames_it() {
        let f = ZipFileFormat::default();
        let mut ex = Exchange::new("hello zip").with_header(FILE_NAME, "in/dir/report.txt");
        marshal_exchange(&f, &mut ex).unwrap();
        assert_eq!(
            ex.message.header(FILE_NAME),
            Some(&Value::from("in/dir/report.txt.zip"))
        );
        let bytes = ex.message.body.to_bytes();
        assert_eq!(&bytes[..4], b"PK\x03\x04", "a zip local file header");
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes.to_vec())).unwrap();
        assert_eq!(archive.len(), 1);
        let mut entry = archive.by_index(0).unwrap();
        assert_eq!(entry.name().unwrap(), "report.txt");
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        assert_eq!(text, "hello zip");

        let kept = ZipFileFormat {
            preserve_path_elements: true,
            ..Default::default()
        };
        let mut ex = Exchange::new("x").with_header(FILE_NAME, "in/dir/report.txt");
        marshal_exchange(&kept, &mut ex).unwrap();
        let mut ex2 = ex.clone();
        unmarshal_exchange(&kept, &mut ex2).unwrap();
        assert_eq!(
            ex2.message.header(FILE_NAME),
            Some(&Value::from("in/dir/report.txt"))
        );
        assert_eq!(ex2.message.body.to_bytes(), &b"x"[..]);
    }

    #[test]
    fn without_a_file_name_the_entry_is_the_exchange_id() {
        let mut ex = Exchange::new("x");
        let id = ex.id.to_string();
        marshal_exchange(&ZipFileFormat::default(), &mut ex).unwrap();
        unmarshal_exchange(&ZipFileFormat::default(), &mut ex).unwrap();
        assert_eq!(ex.message.header(FILE_NAME), Some(&Value::from(id)));
    }

    #[test]
    fn unmarshal_refuses_several_entries_none_and_garbage() {
        let f = ZipFileFormat::default();
        let two = zip_of(&[("a", b"1"), ("b", b"2")]);
        let e = unmarshal_body(&f, &two).unwrap_err().to_string();
        assert!(e.contains("2 entries"), "{e}");
        let e = unmarshal_body(&f, &zip_of(&[])).unwrap_err().to_string();
        assert!(e.contains("no entry"), "{e}");
        let e = unmarshal_body(&f, b"plain text").unwrap_err().to_string();
        assert!(e.contains("not a zip archive"), "{e}");
    }

    #[test]
    fn unmarshal_stops_at_the_size_bound() {
        let zeros = vec![0u8; 4096];
        let archive = zip_of(&[("z", &zeros)]);
        let small = ZipFileFormat {
            max_decompressed_size: Some(1000),
            ..Default::default()
        };
        let e = unmarshal_body(&small, &archive).unwrap_err().to_string();
        assert!(e.contains("more than 1000 bytes"), "{e}");
        let off = ZipFileFormat {
            max_decompressed_size: Some(-1),
            ..Default::default()
        };
        assert_eq!(
            unmarshal_body(&off, &archive).unwrap().to_bytes().len(),
            4096
        );
        assert!(check(&ZipFileFormat {
            using_iterator: true,
            ..Default::default()
        })
        .is_err());
    }
}
