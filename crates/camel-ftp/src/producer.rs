//! `to: ftp://…`: upload the body as a file in the endpoint's directory.
//!
//! The name is the `fileName` expression, else the `CamelFileName` header, else the
//! exchange id; it may hold sub-folders (created with `autoCreate`), never `..` or an
//! absolute path. With `tempPrefix` the body is written under the prefixed name and then
//! renamed into place, so a reader of the folder never sees half a file, and a process
//! killed mid-upload leaves only a temporary file behind: the exchange failed, is retried
//! and rewrites it. A body the `file` consumer handed over lazily, or a download this
//! crate spooled (empty body, `CamelFileAbsolutePath`), is uploaded from its file.
//!
//! Uploads of one endpoint share one session, one at a time; a failed upload closes it and
//! the next exchange opens a new one.

use std::sync::Arc;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use tokio::sync::Mutex;

use crate::headers;
use crate::options::{join, FileExist, FtpOptions};
use crate::remote::{parent, RemoteError, RemoteResult, Session};

/// The producer of one endpoint.
#[derive(Debug)]
pub(crate) struct FtpProducer {
    options: Arc<FtpOptions>,
    /// The open session, if any: taken by one upload at a time.
    session: Mutex<Option<Session>>,
}

/// What an upload sends.
enum Payload {
    Memory(bytes::Bytes),
    File(std::path::PathBuf),
}

/// Why an upload was refused before reaching the server.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error(
        "file name `{0}` must stay inside the endpoint's directory (no `..`, no absolute path)"
    )]
    Outside(String),
    #[error("`{0}` already exists (fileExist=Fail)")]
    Exists(String),
}

impl FtpProducer {
    pub(crate) fn new(options: Arc<FtpOptions>) -> Self {
        FtpProducer {
            options,
            session: Mutex::new(None),
        }
    }

    /// The producer as a route step.
    pub(crate) fn processor(self: Arc<Self>) -> BoxProcessor {
        let name = self.options.connection.protocol.scheme();
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.produce(exchange).await }
        })
        .named(name)
    }

    fn file_name(&self, exchange: &Exchange) -> Result<String, CamelError> {
        let name = match &self.options.producer.file_name {
            Some(expression) => expression.evaluate(exchange)?.to_string(),
            None => match exchange.header(headers::FILE_NAME).filter(|v| !v.is_null()) {
                Some(v) => v.to_string(),
                None => exchange.id.to_string(),
            },
        };
        let outside = name.starts_with('/') || name.split('/').any(|part| part == "..");
        if outside || name.trim().is_empty() {
            return Err(CamelError::external(
                self.options.connection.protocol.scheme(),
                Refused::Outside(name),
            ));
        }
        Ok(name)
    }

    async fn produce(&self, mut exchange: Exchange) -> Result<Exchange, CamelError> {
        let name = self.file_name(&exchange)?;
        let path = join(&self.options.directory, &name);
        let payload = match &exchange.message.body {
            Body::Empty => match exchange
                .header(headers::FILE_ABSOLUTE_PATH)
                .filter(|v| !v.is_null())
            {
                Some(local) => Payload::File(local.to_string().into()),
                None => Payload::Memory(bytes::Bytes::new()),
            },
            Body::Bytes(b) => Payload::Memory(b.clone()),
            Body::Text(t) => Payload::Memory(bytes::Bytes::copy_from_slice(t.as_bytes())),
            Body::Json(j) => Payload::Memory(bytes::Bytes::from(j.to_string())),
        };
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            *guard = Some(
                Session::open(&self.options.connection)
                    .await
                    .map_err(|e| self.failure(e))?,
            );
        }
        let Some(session) = guard.as_mut() else {
            return Err(CamelError::processor("no session"));
        };
        match self.write(session, &path, &payload).await {
            Ok(()) => {}
            Err(Written::Refused(refused)) => {
                return Err(CamelError::external(
                    self.options.connection.protocol.scheme(),
                    refused,
                ))
            }
            Err(Written::Remote(error)) => {
                // The session may be broken: the next exchange opens a new one.
                if let Some(session) = guard.take() {
                    session.close().await;
                }
                return Err(self.failure(error));
            }
        }
        drop(guard);
        exchange
            .message
            .headers
            .insert(headers::FILE_NAME_PRODUCED, path.as_str());
        Ok(exchange)
    }

    fn failure(&self, error: RemoteError) -> CamelError {
        CamelError::external(
            format!("{} producer", self.options.connection.protocol.scheme()),
            error,
        )
    }

    async fn write(
        &self,
        session: &mut Session,
        path: &str,
        payload: &Payload,
    ) -> Result<(), Written> {
        let o = &self.options.producer;
        let folder = parent(path);
        if o.auto_create && !folder.is_empty() {
            session.create_folders(folder).await?;
        }
        match o.file_exist {
            FileExist::Fail if session.exists(path).await? => {
                return Err(Written::Refused(Refused::Exists(path.to_string())))
            }
            FileExist::Ignore if session.exists(path).await? => return Ok(()),
            FileExist::Append => {
                upload(session, path, payload, true).await?;
                return Ok(());
            }
            _ => {}
        }
        match &o.temp_prefix {
            Some(prefix) => {
                let only = path.rsplit('/').next().unwrap_or(path);
                let temporary = join(folder, &format!("{prefix}{only}"));
                upload(session, &temporary, payload, false).await?;
                session.rename(&temporary, path).await?;
            }
            None => {
                upload(session, path, payload, false).await?;
            }
        }
        Ok(())
    }
}

enum Written {
    Refused(Refused),
    Remote(RemoteError),
}

impl From<RemoteError> for Written {
    fn from(e: RemoteError) -> Self {
        Written::Remote(e)
    }
}

async fn upload(
    session: &mut Session,
    path: &str,
    payload: &Payload,
    append: bool,
) -> RemoteResult<u64> {
    match payload {
        Payload::Memory(bytes) => {
            let mut source: &[u8] = bytes;
            session.upload(path, &mut source, append).await
        }
        Payload::File(local) => {
            let mut file = tokio::fs::File::open(local).await.map_err(|e| {
                RemoteError::new(format!("reading `{}` to upload", local.display()), e)
            })?;
            session.upload(path, &mut file, append).await
        }
    }
}
