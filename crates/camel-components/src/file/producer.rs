//! The file producer: name the file, keep it inside the folder, write the body.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use camel_api::{names, BoxExpression, CamelError, Exchange, Process, ProcessorFuture};

use super::folder::resolve_parent;
use super::path::{inside, is_link_refusal};
use super::{headers, FileError, FileExist};

pub(super) struct FileProducer {
    pub(super) dir: PathBuf,
    pub(super) file_name: Option<BoxExpression>,
    pub(super) file_exist: FileExist,
    pub(super) auto_create: bool,
}

impl FileProducer {
    /// The name to write: the `file_name` expression, else the `CamelFileName` header,
    /// else the exchange id.
    fn name(&self, exchange: &Exchange) -> Result<String, CamelError> {
        Ok(match &self.file_name {
            Some(expression) => expression.evaluate(exchange)?.to_string(),
            None => match exchange.header(names::FILE_NAME) {
                Some(name) => name.to_string(),
                None => exchange.id.to_string(),
            },
        })
    }
}

impl Process for FileProducer {
    fn process(&self, mut exchange: Exchange) -> ProcessorFuture {
        let (name, relative) = match self.name(&exchange) {
            Ok(name) => match inside(&name) {
                Ok(relative) => (name, relative),
                Err(error) => return ProcessorFuture::ready(Err(error.into())),
            },
            Err(error) => return ProcessorFuture::ready(Err(error)),
        };
        let dir = self.dir.clone();
        let file_exist = self.file_exist;
        let auto_create = self.auto_create;
        ProcessorFuture::boxed(async move {
            let bytes = exchange.message.body.to_bytes();
            let unique = exchange.id.sequence();
            let produced = dir.join(&relative).to_string_lossy().into_owned();
            // One hop to the blocking pool for the whole write: the folder walk and the
            // write are a dozen system calls, each of which would be a hop of its own
            // through `tokio::fs`.
            tokio::task::spawn_blocking(move || {
                let folder = resolve_parent(&dir, &relative, &name, auto_create)?;
                // `inside` keeps only normal components and at least one.
                let file_name = relative.file_name().unwrap_or(relative.as_os_str());
                write(&folder.join(file_name), &bytes, file_exist, unique)
            })
            .await
            .map_err(|e| CamelError::processor(format!("file write task: {e}")))??;
            exchange
                .message
                .headers
                .insert(headers::FILE_NAME_PRODUCED, produced);
            Ok(exchange)
        })
    }
}

/// Writes `bytes` to `target` as `file_exist` says. `unique` names the temporary file.
fn write(target: &Path, bytes: &[u8], file_exist: FileExist, unique: u64) -> Result<(), FileError> {
    let io = |source| FileError::Io {
        path: target.to_path_buf(),
        source,
    };
    match file_exist {
        FileExist::Override => {
            // Write beside the target under a hidden name, then rename: a reader never
            // sees a partial file, and consumers skip dot-files. The name is short and of
            // fixed length so that a target name at the 255-byte limit still works, and
            // created exclusively so that a planted link under it is not followed.
            let temp = target.with_file_name(format!(
                ".camel-{:08x}-{unique:016x}.tmp",
                std::process::id()
            ));
            let written = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
                .and_then(|mut file| file.write_all(bytes));
            // `rename` replaces a link at `target` itself, never the file it points to.
            if let Err(source) = written.and_then(|()| std::fs::rename(&temp, target)) {
                let _ = std::fs::remove_file(&temp);
                return Err(io(source));
            }
            Ok(())
        }
        FileExist::Append => {
            let mut file = match open_append(target) {
                Ok(file) => file,
                Err(e) if is_link_refusal(&e) => {
                    return Err(FileError::AppendToLink(target.to_path_buf()))
                }
                Err(e) => return Err(io(e)),
            };
            file.write_all(bytes).map_err(io)
        }
        FileExist::Fail | FileExist::Ignore => {
            let opened = OpenOptions::new().write(true).create_new(true).open(target);
            let mut file = match opened {
                Ok(file) => file,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    return match file_exist {
                        FileExist::Ignore => Ok(()),
                        _ => Err(FileError::Exists(target.to_path_buf())),
                    };
                }
                Err(e) => return Err(io(e)),
            };
            file.write_all(bytes).map_err(io)
        }
    }
}

/// Opens `target` for appending, refusing a final symbolic link (which would append to
/// wherever it points).
fn open_append(target: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(super::path::link_refused());
    }
    options.open(target)
}

#[cfg(test)]
mod tests;
