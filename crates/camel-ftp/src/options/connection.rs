//! Where and as whom to log in: the connection options, and the URI as it may be shown.
//!
//! Two values here are credentials, the password and the SFTP key's passphrase. Neither
//! is ever shown: [`Connection`]'s `Debug` masks both, and [`shown_uri`] masks the
//! passphrase that `camel_api::redact_url` does not know by name (it masks the password).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use camel_api::{CamelError, Parameters};

use crate::Protocol;

/// The parameters read here, in snake_case.
pub(super) const CONNECTION_PARAMETERS: &[&str] = &[
    "username",
    "password",
    "private_key_file",
    "private_key_uri",
    "private_key_passphrase",
    "known_hosts_file",
    "use_user_known_hosts_file",
    "strict_host_key_checking",
    "connect_timeout",
    "passive_mode",
    "binary",
    "trust_store_file",
    "is_implicit",
];

/// The port of implicit FTPS when the URI gives none (Camel's, and the IANA's `ftps`).
pub const IMPLICIT_FTPS_PORT: u16 = 990;

/// Where and as whom to log in. The password and the key's passphrase are never shown.
#[derive(Clone)]
pub struct Connection {
    /// FTP, FTPS or SFTP.
    pub protocol: Protocol,
    /// The server's host name or address.
    pub host: String,
    /// The server's port (21 for FTP and explicit FTPS, 990 for implicit FTPS, 22 for
    /// SFTP unless given).
    pub port: u16,
    /// The user to log in as (`anonymous` for FTP when not given).
    pub username: Option<String>,
    /// The password (FTP, FTPS, and SFTP without a key).
    pub password: Option<String>,
    /// SFTP: the private key to log in with (OpenSSH, PEM or PuTTY format), from
    /// `privateKeyFile` or `privateKeyUri`.
    pub private_key_file: Option<PathBuf>,
    /// SFTP: the passphrase the private key is encrypted with.
    pub private_key_passphrase: Option<String>,
    /// SFTP: the known hosts file the server's key is checked against.
    pub known_hosts_file: Option<PathBuf>,
    /// SFTP: refuse a server whose key is not in `known_hosts_file`.
    pub strict_host_key_checking: bool,
    /// Time allowed to connect and log in.
    pub connect_timeout: Duration,
    /// FTP: passive data connections (else active).
    pub passive_mode: bool,
    /// FTP: binary transfers (else ASCII, with line endings converted by the server).
    pub binary: bool,
    /// FTPS: the PEM certificates trusted instead of the system's.
    pub trust_store_file: Option<PathBuf>,
    /// FTPS: TLS from the first byte (implicit), else `AUTH TLS` after the greeting.
    pub is_implicit: bool,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |secret: &Option<String>| secret.as_ref().map(|_| "***");
        f.debug_struct("Connection")
            .field("protocol", &self.protocol)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &masked(&self.password))
            .field("private_key_file", &self.private_key_file)
            .field(
                "private_key_passphrase",
                &masked(&self.private_key_passphrase),
            )
            .field("known_hosts_file", &self.known_hosts_file)
            .field("strict_host_key_checking", &self.strict_host_key_checking)
            .field("is_implicit", &self.is_implicit)
            .finish_non_exhaustive()
    }
}

/// What the URI's authority gave: host, port if written, and the user information.
pub(super) struct Authority {
    pub(super) host: String,
    pub(super) port: Option<u16>,
    pub(super) username: Option<String>,
    pub(super) password: Option<String>,
}

/// Reads the connection's parameters on top of what the URI's authority gave.
pub(super) fn take_connection(
    protocol: Protocol,
    authority: Authority,
    p: &mut Parameters,
    invalid: &dyn Fn(String) -> CamelError,
) -> Result<Connection, CamelError> {
    let Authority {
        host,
        port,
        mut username,
        mut password,
    } = authority;
    if let Some(u) = p.take_str("username") {
        username = Some(u);
    }
    if let Some(pw) = p.take_str("password") {
        password = Some(pw);
    }
    let is_implicit = p.take_bool("is_implicit")?.unwrap_or(false);
    if is_implicit && protocol != Protocol::Ftps {
        // Silently ignored, `ftp:…?isImplicit=true` would send the password in clear.
        return Err(invalid(format!(
            "isImplicit is an ftps option; use ftps://… (this endpoint is {}:)",
            protocol.scheme()
        )));
    }
    let port = match port {
        Some(port) => port,
        None if is_implicit => IMPLICIT_FTPS_PORT,
        None => protocol.default_port(),
    };
    let private_key_file = match (
        p.take_str("private_key_file"),
        p.take_str("private_key_uri"),
    ) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "give privateKeyFile or privateKeyUri, not both (they name the same key)".into(),
            ))
        }
        (Some(file), None) => Some(PathBuf::from(file)),
        (None, Some(uri)) => Some(key_uri_path(&uri).map_err(&invalid)?),
        (None, None) => None,
    };
    let private_key_passphrase = p.take_str("private_key_passphrase");
    if private_key_passphrase.is_some() && private_key_file.is_none() {
        return Err(invalid(
            "privateKeyPassphrase needs the key it decrypts: give privateKeyFile or privateKeyUri"
                .into(),
        ));
    }
    let explicit_known_hosts = p.take_str("known_hosts_file").map(PathBuf::from);
    let use_user_known_hosts = p.take_bool("use_user_known_hosts_file")?.unwrap_or(true);
    let strict = match p.take_choice("strict_host_key_checking", &["yes", "no"])? {
        Some("yes") => true,
        Some(_) => false,
        // Camel's default is `no`; a known hosts file given means it is to be checked.
        None => explicit_known_hosts.is_some(),
    };
    // Camel's `useUserKnownHostsFile` (default true): without `knownHostsFile`, the user's
    // own `~/.ssh/known_hosts` is read when there is one (a changed key is then refused).
    let known_hosts_file = explicit_known_hosts.or_else(|| {
        (use_user_known_hosts && protocol == Protocol::Sftp)
            .then(user_known_hosts)
            .flatten()
    });
    if strict && known_hosts_file.is_none() {
        return Err(invalid(
            "strictHostKeyChecking=yes needs knownHostsFile, or a ~/.ssh/known_hosts with useUserKnownHostsFile=true (the server's key is checked against it)"
                .into(),
        ));
    }
    Ok(Connection {
        protocol,
        host,
        port,
        username,
        password,
        private_key_file,
        private_key_passphrase,
        known_hosts_file,
        strict_host_key_checking: strict,
        connect_timeout: p
            .take_duration("connect_timeout")?
            .unwrap_or(Duration::from_secs(10)),
        passive_mode: p.take_bool("passive_mode")?.unwrap_or(true),
        binary: p.take_bool("binary")?.unwrap_or(true),
        trust_store_file: p.take_str("trust_store_file").map(PathBuf::from),
        is_implicit,
    })
}

/// `$HOME/.ssh/known_hosts`, when that file exists.
fn user_known_hosts() -> Option<PathBuf> {
    known_hosts_in(std::env::var_os("HOME"))
}

/// `HOME/.ssh/known_hosts`, when `home` is given and that file exists.
pub(super) fn known_hosts_in(home: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let home = home.filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".ssh").join("known_hosts")).filter(|p| p.is_file())
}

/// The local path of Camel's `privateKeyUri`: `file:/keys/app`, `file:///keys/app` or a
/// bare path. Camel also reads `classpath:` and `http:` resources; there is no classpath
/// here, and a key fetched over the network is refused rather than half supported.
fn key_uri_path(uri: &str) -> Result<PathBuf, String> {
    let uri = uri.trim();
    if let Some(rest) = uri.strip_prefix("file:") {
        // `file:///k` and `file:/k` are `/k`; `file://host/k` names another machine.
        let path = match rest.strip_prefix("//") {
            Some(after) if after.starts_with('/') => after,
            Some(_) => {
                return Err(format!(
                    "privateKeyUri `{uri}` names a host; give a local file as file:/path"
                ))
            }
            None => rest,
        };
        if path.is_empty() {
            return Err("privateKeyUri `file:` needs a path, as in file:/keys/app".into());
        }
        return Ok(PathBuf::from(camel_api::percent_decode(path)));
    }
    // A scheme (two letters or more, so a Windows drive `C:` is a path).
    if let Some((scheme, _)) = uri.split_once(':') {
        if scheme.len() > 1 && scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!(
                "privateKeyUri reads local files only (file:/path or a path), not `{scheme}:`"
            ));
        }
    }
    Ok(PathBuf::from(uri))
}

/// `uri` fit for a log line or a message: the password and `privateKeyPassphrase`
/// masked (`camel_api::redact_url` counts both as credentials).
pub(crate) fn shown_uri(uri: &str) -> String {
    camel_api::redact_url(uri)
}
