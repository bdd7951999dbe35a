//! The file producer: name the file, keep it inside the folder, write the body.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use camel_api::{names, BoxExpression, CamelError, Exchange, Process, ProcessorFuture};
use tokio::io::AsyncWriteExt;

use super::path::inside;
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
        let target = match self.name(&exchange) {
            Ok(name) => match inside(&name) {
                Ok(relative) => self.dir.join(relative),
                Err(error) => return ProcessorFuture::ready(Err(error.into())),
            },
            Err(error) => return ProcessorFuture::ready(Err(error)),
        };
        let file_exist = self.file_exist;
        let auto_create = self.auto_create;
        ProcessorFuture::boxed(async move {
            let bytes = exchange.message.body.to_bytes();
            if auto_create {
                if let Some(parent) = target.parent() {
                    tokio::fs::create_dir_all(parent)
                        .await
                        .map_err(|source| FileError::Io {
                            path: parent.to_path_buf(),
                            source,
                        })?;
                }
            }
            let suffix = exchange.id.sequence();
            write(&target, &bytes, file_exist, suffix).await?;
            let produced = target.to_string_lossy().into_owned();
            exchange
                .message
                .headers
                .insert(headers::FILE_NAME_PRODUCED, produced);
            Ok(exchange)
        })
    }
}

/// Writes `bytes` to `target` as `file_exist` says. `unique` names the temporary file.
async fn write(
    target: &Path,
    bytes: &[u8],
    file_exist: FileExist,
    unique: u64,
) -> Result<(), FileError> {
    let io = |source| FileError::Io {
        path: target.to_path_buf(),
        source,
    };
    match file_exist {
        FileExist::Override => {
            // Write beside the target under a hidden name, then rename: a reader never
            // sees a partial file, and consumers skip dot-files.
            let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned());
            let temp =
                target.with_file_name(format!(".{}.{unique}.tmp", file_name.unwrap_or_default()));
            if let Err(source) = tokio::fs::write(&temp, bytes).await {
                return Err(io(source));
            }
            if let Err(source) = tokio::fs::rename(&temp, target).await {
                let _ = tokio::fs::remove_file(&temp).await;
                return Err(io(source));
            }
            Ok(())
        }
        FileExist::Append => {
            let mut file = tokio::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(target)
                .await
                .map_err(io)?;
            file.write_all(bytes).await.map_err(io)?;
            file.flush().await.map_err(io)
        }
        FileExist::Fail | FileExist::Ignore => {
            let opened = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(target)
                .await;
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
            file.write_all(bytes).await.map_err(io)?;
            file.flush().await.map_err(io)
        }
    }
}

#[cfg(test)]
mod tests;
