//! SFTP through russh (SSH, pure Rust) and russh-sftp.

use std::path::PathBuf;
use std::sync::Arc;

use russh::client::{self, Handle};
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKeyOrCertificate};
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::client::SftpSession as Sftp;
use russh_sftp::protocol::{OpenFlags, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::options::Connection;
use crate::private_key;
use crate::remote::{Entry, EntryKind, RemoteError, RemoteResult};

/// A logged-in SFTP session: the SSH connection and the SFTP channel on it.
pub(crate) struct SftpSession {
    ssh: Handle<HostKeyCheck>,
    sftp: Sftp,
}

/// Checks the server's key against `known_hosts_file` when `strict_host_key_checking`.
struct HostKeyCheck {
    host: String,
    port: u16,
    known_hosts: Option<PathBuf>,
    strict: bool,
}

impl client::Handler for HostKeyCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server_public_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = server_public_key.public_key();
        let Some(path) = &self.known_hosts else {
            if self.strict {
                return Ok(false);
            }
            tracing::debug!(host = %self.host, "SFTP server key accepted unchecked (strictHostKeyChecking=no)");
            return Ok(true);
        };
        match russh::keys::check_known_hosts_path(&self.host, self.port, &key, path) {
            Ok(true) => Ok(true),
            Ok(false) if !self.strict => {
                tracing::warn!(host = %self.host, known_hosts = %path.display(),
                    "SFTP server key not in the known hosts file; accepted (strictHostKeyChecking=no)");
                Ok(true)
            }
            Ok(false) => {
                tracing::warn!(host = %self.host, known_hosts = %path.display(),
                    "SFTP server key not in the known hosts file: connection refused");
                Ok(false)
            }
            // A changed key is refused whatever `strict` says: that is what the file is for.
            Err(error) => {
                tracing::warn!(host = %self.host, known_hosts = %path.display(), %error,
                    "SFTP server key does not match the known hosts file: connection refused");
                Ok(false)
            }
        }
    }
}

fn error(context: impl std::fmt::Display, e: SftpError) -> RemoteError {
    let not_found = matches!(&e, SftpError::Status(s) if s.status_code == StatusCode::NoSuchFile);
    let refused = matches!(&e, SftpError::Status(_));
    RemoteError::new(context, e)
        .refused(refused)
        .not_found(not_found)
}

/// Reads (and decrypts) `privateKeyFile`, off the runtime's threads: bcrypt, which
/// protects an OpenSSH key's passphrase, is slow on purpose.
pub(crate) async fn login_key(c: &Connection) -> RemoteResult<Option<PrivateKey>> {
    let Some(file) = c.private_key_file.clone() else {
        return Ok(None);
    };
    let where_ = format!("logging in to sftp://{}:{}", c.host, c.port);
    let passphrase = c.private_key_passphrase.clone();
    let loaded =
        tokio::task::spawn_blocking(move || private_key::load(&file, passphrase.as_deref()))
            .await
            .map_err(|e| RemoteError::new(&where_, e))?;
    loaded.map(Some).map_err(|e| RemoteError::new(&where_, e))
}

impl SftpSession {
    /// Connects and logs in with `key` (read by [`login_key`]), else the password.
    pub(crate) async fn open(c: &Connection, key: Option<PrivateKey>) -> RemoteResult<SftpSession> {
        let where_ = format!("sftp://{}:{}", c.host, c.port);
        let user = c.username.clone().ok_or_else(|| {
            RemoteError::new(&where_, "sftp needs a user name (sftp://user@host)")
        })?;
        let config = Arc::new(client::Config::default());
        let check = HostKeyCheck {
            host: c.host.clone(),
            port: c.port,
            known_hosts: c.known_hosts_file.clone(),
            strict: c.strict_host_key_checking,
        };
        let mut ssh = client::connect(config, (c.host.as_str(), c.port), check)
            .await
            .map_err(|e| RemoteError::new(format!("connecting to {where_}"), e))?;
        let login = format!("logging in to {where_} as `{user}`");
        let auth = match (key, &c.password) {
            (Some(key), _) => {
                let hash = ssh
                    .best_supported_rsa_hash()
                    .await
                    .map_err(|e| RemoteError::new(&login, e))?
                    .flatten();
                ssh.authenticate_publickey(&user, PrivateKeyWithHashAlg::new(Arc::new(key), hash))
                    .await
            }
            (None, Some(password)) => ssh.authenticate_password(&user, password).await,
            (None, None) => {
                return Err(RemoteError::new(
                    &login,
                    "give privateKeyFile (or privateKeyUri) or password",
                ))
            }
        }
        .map_err(|e| RemoteError::new(&login, e))?;
        if !auth.success() {
            return Err(RemoteError::new(&login, "authentication refused"));
        }
        let channel = ssh
            .channel_open_session()
            .await
            .map_err(|e| RemoteError::new(format!("opening a channel on {where_}"), e))?;
        channel
            .request_subsystem(true, "sftp")
            .await
            .map_err(|e| RemoteError::new(format!("starting sftp on {where_}"), e))?;
        let sftp = Sftp::new(channel.into_stream())
            .await
            .map_err(|e| error(format!("starting sftp on {where_}"), e))?;
        Ok(SftpSession { ssh, sftp })
    }

    pub(crate) async fn list(&mut self, dir: &str) -> RemoteResult<Vec<Entry>> {
        let target = if dir.is_empty() { "." } else { dir };
        let entries = self
            .sftp
            .read_dir(target)
            .await
            .map_err(|e| error(format!("listing `{dir}`"), e))?;
        Ok(entries
            .filter_map(|entry| {
                let name = entry.file_name();
                if name == "." || name == ".." {
                    return None;
                }
                let meta = entry.metadata();
                // The type bits as a whole: a link's (0o120000) include a file's (0o100000).
                let kind = match meta.permissions.map(|p| p & 0o170000) {
                    Some(0o100000) => EntryKind::File,
                    Some(0o040000) => EntryKind::Folder,
                    _ => EntryKind::Other,
                };
                Some(Entry {
                    name,
                    kind,
                    size: meta.size.unwrap_or(0),
                    modified: meta.mtime.map(|s| i64::from(s) * 1000),
                })
            })
            .collect())
    }

    pub(crate) async fn download(
        &mut self,
        path: &str,
        sink: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> RemoteResult<u64> {
        let what = format!("downloading `{path}`");
        let mut file = self.sftp.open(path).await.map_err(|e| error(&what, e))?;
        let n = tokio::io::copy(&mut file, sink)
            .await
            .map_err(|e| RemoteError::new(&what, e))?;
        let _ = file.close().await;
        Ok(n)
    }

    pub(crate) async fn upload(
        &mut self,
        path: &str,
        source: &mut (dyn AsyncRead + Unpin + Send),
        append: bool,
    ) -> RemoteResult<u64> {
        let what = format!("uploading `{path}`");
        let flags = if append {
            OpenFlags::CREATE | OpenFlags::APPEND | OpenFlags::WRITE
        } else {
            OpenFlags::CREATE | OpenFlags::TRUNCATE | OpenFlags::WRITE
        };
        let mut file = self
            .sftp
            .open_with_flags(path, flags)
            .await
            .map_err(|e| error(&what, e))?;
        let n = tokio::io::copy(source, &mut file)
            .await
            .map_err(|e| RemoteError::new(&what, e))?;
        file.flush().await.map_err(|e| RemoteError::new(&what, e))?;
        // Closing the handle is when the server reports a failed write.
        file.close().await.map_err(|e| RemoteError::new(&what, e))?;
        Ok(n)
    }

    pub(crate) async fn exists(&mut self, path: &str) -> RemoteResult<bool> {
        self.sftp
            .try_exists(path)
            .await
            .map_err(|e| error(format!("checking `{path}`"), e))
    }

    pub(crate) async fn remove(&mut self, path: &str) -> RemoteResult<()> {
        self.sftp
            .remove_file(path)
            .await
            .map_err(|e| error(format!("deleting `{path}`"), e))
    }

    pub(crate) async fn rename(&mut self, from: &str, to: &str) -> RemoteResult<()> {
        let what = format!("renaming `{from}` to `{to}`");
        // SFTP version 3 refuses to rename onto an existing file: it is removed first.
        if self
            .sftp
            .try_exists(to)
            .await
            .map_err(|e| error(&what, e))?
        {
            self.sftp
                .remove_file(to)
                .await
                .map_err(|e| error(&what, e))?;
        }
        self.sftp
            .rename(from, to)
            .await
            .map_err(|e| error(&what, e))
    }

    pub(crate) async fn create_folder(&mut self, dir: &str) -> RemoteResult<()> {
        self.sftp
            .create_dir(dir)
            .await
            .map_err(|e| error(format!("creating folder `{dir}`"), e))
    }

    pub(crate) async fn close(self) {
        let _ = self.sftp.close().await;
        let _ = self
            .ssh
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}
