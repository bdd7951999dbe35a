//! Reading one listed file into an exchange, safely against what may have changed since
//! the listing.
//!
//! The file is opened with `O_NONBLOCK | O_NOFOLLOW` and checked with `fstat` on the open
//! handle: an entry replaced by a FIFO after the listing cannot block the read (and with
//! it the consumer and the stop), and one replaced by a symbolic link is refused rather
//! than followed out of the folder.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::time::UNIX_EPOCH;

use camel_api::{names, Body, Exchange};

use super::super::headers;
use super::super::path::is_link_refusal;
use super::scan::{special_kind, Found, Skip};

/// The exchange for `file`; `Ok(None)` when it disappeared since the listing (another
/// consumer took it). With `lazy` the file is checked but not read: the body stays empty
/// and a step that streams (a `split`) reads it through `CamelFileAbsolutePath`.
pub(super) async fn read(file: &Found, lazy: bool) -> Result<Option<Exchange>, Skip> {
    let open = file.open.clone();
    let read = tokio::task::spawn_blocking(move || read_regular(&open, lazy))
        .await
        .map_err(|e| Skip::Unreadable(io::Error::other(e)))?;
    let (meta, bytes) = match read {
        Ok(Some(read)) => read,
        Ok(None) => return Ok(None),
        Err(skip) => return Err(skip),
    };
    let body = if lazy { Body::Empty } else { Body::from(bytes) };
    Ok(Some(with_headers(Exchange::new(body), file, &meta)))
}

/// The exchange of `file` without its body, from its `stat`: what an `idempotent_key`
/// reads. Nothing is opened, so a FIFO swapped in since the listing cannot block it;
/// `Ok(None)` when the file went away.
pub(super) async fn headers_only(file: &Found) -> Result<Option<Exchange>, Skip> {
    match tokio::fs::metadata(&file.open).await {
        Ok(meta) => Ok(Some(with_headers(Exchange::default(), file, &meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Skip::Unreadable(e)),
    }
}

/// The absolute path of `file`, its default idempotent key and `CamelFileAbsolutePath`.
pub(super) fn absolute(file: &Found) -> String {
    std::path::absolute(&file.path)
        .unwrap_or_else(|_| file.path.clone())
        .to_string_lossy()
        .into_owned()
}

/// `exchange` with the consumer's file headers.
fn with_headers(exchange: Exchange, file: &Found, meta: &Metadata) -> Exchange {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let only = file
        .name
        .rsplit('/')
        .next()
        .unwrap_or(&file.name)
        .to_string();
    exchange
        .with_header(names::FILE_NAME, file.name.as_str())
        .with_header(headers::FILE_NAME_ONLY, only)
        .with_header(headers::FILE_LENGTH, meta.len())
        .with_header(headers::FILE_LAST_MODIFIED, modified)
        .with_header(headers::FILE_ABSOLUTE_PATH, absolute(file))
}

/// Opens `path` without blocking and without following a final link, and reads it (unless
/// `lazy`) if it is a regular file.
fn read_regular(path: &Path, lazy: bool) -> Result<Option<(Metadata, Vec<u8>)>, Skip> {
    let mut file = match open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_link_refusal(&e) => return Err(Skip::BecameSymlink),
        Err(e) => return Err(Skip::Unreadable(e)),
    };
    let meta = file.metadata().map_err(Skip::Unreadable)?;
    if !meta.is_file() {
        return Err(Skip::NotRegular(special_kind(&meta.file_type())));
    }
    if lazy {
        return Ok(Some((meta, Vec::new())));
    }
    let capacity = usize::try_from(meta.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    file.read_to_end(&mut bytes).map_err(Skip::Unreadable)?;
    Ok(Some((meta, bytes)))
}

#[cfg(unix)]
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK changes nothing for a regular file's reads; it only keeps the open of a
    // FIFO from waiting for a writer.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(super::super::path::link_refused());
    }
    File::open(path)
}
