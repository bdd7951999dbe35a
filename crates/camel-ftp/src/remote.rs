//! One logged-in session to the server, whatever the protocol: the few operations the
//! consumer and the producer need, each an `async fn` on [`Session`].

use std::fmt;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::ftp::FtpSession;
use crate::options::Connection;
use crate::sftp::{login_key, SftpSession};
use crate::Protocol;

/// A failure talking to the server. The text never holds the password.
#[derive(Debug, thiserror::Error)]
#[error("{context}: {message}")]
pub(crate) struct RemoteError {
    context: String,
    message: String,
    /// The server answered "no such file" (550 on FTP, `NoSuchFile` on SFTP).
    pub(crate) not_found: bool,
    /// The server answered with an error (no such file, permission denied …): the
    /// session is still usable, only this operation failed.
    pub(crate) refused: bool,
}

impl RemoteError {
    pub(crate) fn new(context: impl fmt::Display, message: impl fmt::Display) -> Self {
        RemoteError {
            context: context.to_string(),
            message: message.to_string(),
            not_found: false,
            refused: false,
        }
    }

    pub(crate) fn not_found(mut self, yes: bool) -> Self {
        self.not_found = yes;
        self.refused |= yes;
        self
    }

    pub(crate) fn refused(mut self, yes: bool) -> Self {
        self.refused = yes;
        self
    }
}

pub(crate) type RemoteResult<T> = Result<T, RemoteError>;

/// One entry of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name inside its folder.
    pub(crate) name: String,
    pub(crate) kind: EntryKind,
    pub(crate) size: u64,
    /// Milliseconds since the Unix epoch, when the server tells.
    pub(crate) modified: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Folder,
    /// A link or anything else: not taken.
    Other,
}

/// A logged-in session.
pub(crate) enum Session {
    Ftp(FtpSession),
    Sftp(SftpSession),
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Session::Ftp(_) => "Session::Ftp",
            Session::Sftp(_) => "Session::Sftp",
        })
    }
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Session::Ftp($s) => $e,
            Session::Sftp($s) => $e,
        }
    };
}

impl Session {
    /// Connects and logs in, within `connect_timeout` (an SFTP key is read and decrypted
    /// before the clock starts: that is local work, not the server's answer).
    pub(crate) async fn open(connection: &Connection) -> RemoteResult<Session> {
        let what = format!(
            "connecting to {}://{}:{}",
            connection.protocol.scheme(),
            connection.host,
            connection.port
        );
        let key = match connection.protocol {
            Protocol::Sftp => login_key(connection).await?,
            Protocol::Ftp | Protocol::Ftps => None,
        };
        let opened = tokio::time::timeout(connection.connect_timeout, async {
            match connection.protocol {
                Protocol::Ftp | Protocol::Ftps => {
                    FtpSession::open(connection).await.map(Session::Ftp)
                }
                Protocol::Sftp => SftpSession::open(connection, key).await.map(Session::Sftp),
            }
        })
        .await;
        match opened {
            Ok(session) => session,
            Err(_) => Err(RemoteError::new(
                what,
                format!(
                    "no answer within {:?}{}",
                    connection.connect_timeout,
                    silence_hint(connection)
                ),
            )),
        }
    }

    /// The entries of `dir` (`.` and `..` left out).
    pub(crate) async fn list(&mut self, dir: &str) -> RemoteResult<Vec<Entry>> {
        each!(self, s => s.list(dir).await)
    }

    /// Writes the file at `path` to `sink`; the number of bytes.
    pub(crate) async fn download(
        &mut self,
        path: &str,
        sink: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> RemoteResult<u64> {
        each!(self, s => s.download(path, sink).await)
    }

    /// Writes `source` to `path`, replacing it or appending to it.
    pub(crate) async fn upload(
        &mut self,
        path: &str,
        source: &mut (dyn AsyncRead + Unpin + Send),
        append: bool,
    ) -> RemoteResult<u64> {
        each!(self, s => s.upload(path, source, append).await)
    }

    /// Whether a file exists at `path`.
    pub(crate) async fn exists(&mut self, path: &str) -> RemoteResult<bool> {
        each!(self, s => s.exists(path).await)
    }

    pub(crate) async fn remove(&mut self, path: &str) -> RemoteResult<()> {
        each!(self, s => s.remove(path).await)
    }

    /// Renames `from` to `to`, replacing `to` if it exists.
    pub(crate) async fn rename(&mut self, from: &str, to: &str) -> RemoteResult<()> {
        each!(self, s => s.rename(from, to).await)
    }

    /// Creates `dir` and its missing parents; existing ones are fine.
    pub(crate) async fn create_folders(&mut self, dir: &str) -> RemoteResult<()> {
        let mut path = String::new();
        if dir.starts_with('/') {
            path.push('/');
        }
        for part in dir.split('/').filter(|p| !p.is_empty()) {
            if !path.is_empty() && !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(part);
            // An existing folder answers with an error; whether the last one is there is
            // what the next upload or rename finds out.
            let _ = each!(self, s => s.create_folder(&path).await);
        }
        Ok(())
    }

    /// Logs out; errors are of no interest any more.
    pub(crate) async fn close(self) {
        each!(self, s => s.close().await)
    }
}

/// Why a server may say nothing at all. An implicit FTPS server waits for the client's
/// TLS hello while an explicit FTPS client waits for the server's greeting: both wait
/// until `connect_timeout`.
fn silence_hint(connection: &Connection) -> &'static str {
    match connection.protocol {
        Protocol::Ftps if !connection.is_implicit => {
            " (an implicit FTPS port, often 990, waits for TLS first: if this is one, \
             set isImplicit=true)"
        }
        _ => "",
    }
}

/// The folder part of `path` (`""` for a bare name).
pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::parent;

    #[test]
    fn the_parent_of_a_path() {
        assert_eq!(parent("a/b/c.txt"), "a/b");
        assert_eq!(parent("c.txt"), "");
        assert_eq!(parent("/c.txt"), "");
    }
}
