//! The admin flags of `camel run` and what they amount to once checked: the address, the
//! token, the Host allow-list and the connection bounds. Every mistake is found here,
//! before a route starts (ADR 0102).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::token::Token;

/// The environment variable that may hold the token instead of `--admin-token-file`.
pub(crate) const TOKEN_ENV: &str = "CAMEL_ADMIN_TOKEN";

/// Flags of the admin API (flattened into `camel run`'s).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AdminArgs {
    /// Serve the admin API at http://ADDR: /health, /metrics, and /routes to list, start,
    /// stop, suspend, resume, replace (hot swap) and remove routes. A bare PORT binds
    /// 127.0.0.1:PORT (port 0 picks a free port; the log says which). An address that is
    /// not loopback needs a token (--admin-token-file or CAMEL_ADMIN_TOKEN).
    #[arg(long = "admin-addr", id = "admin_addr", value_name = "ADDR", value_parser = parse_addr, conflicts_with = "metrics_addr")]
    pub(crate) addr: Option<SocketAddr>,
    /// File holding the admin API's bearer token (at least 16 characters; surrounding
    /// whitespace ignored). With a token, every request but GET /health needs
    /// `Authorization: Bearer TOKEN`; without one, the API is read-only. The env var
    /// CAMEL_ADMIN_TOKEN may hold the token itself instead.
    #[arg(long, value_name = "PATH", requires = "admin_addr")]
    admin_token_file: Option<PathBuf>,
    /// A name the admin API answers to in the `Host` header besides loopback names and the
    /// address a connection came in on (any port); repeatable. E.g. the DNS name of the
    /// host when it is reached from other machines.
    #[arg(long = "admin-allowed-host", value_name = "NAME", value_parser = parse_host, requires = "admin_addr")]
    allowed_hosts: Vec<String>,
    /// Connections the admin API serves at once; one beyond is answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    admin_max_connections: u32,
    /// Seconds a client of the admin API has to send a request's headers (and, after
    /// them, its body); a connection idle for that long between requests is closed too.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    admin_header_timeout: u64,
    /// Serve the admin API (and the console) over HTTPS with this PEM certificate chain
    /// (leaf first); needs --admin-tls-key.
    #[arg(long, value_name = "PATH", requires_all = ["admin_addr", "admin_tls_key"])]
    admin_tls_cert: Option<PathBuf>,
    /// The PEM private key (PKCS#8, PKCS#1 or SEC1) of --admin-tls-cert.
    #[arg(long, value_name = "PATH", requires_all = ["admin_addr", "admin_tls_cert"])]
    admin_tls_key: Option<PathBuf>,
}

/// The admin API's checked configuration.
#[derive(Debug, Clone)]
pub(crate) struct AdminConfig {
    pub(crate) addr: SocketAddr,
    pub(crate) token: Option<Token>,
    /// Host names (lower case, IPv6 in brackets) accepted besides the built-in ones.
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
    /// HTTPS instead of HTTP (`--admin-tls-cert/--admin-tls-key`).
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
}

/// Why the admin flags cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AdminConfigError {
    #[error("--admin-addr {0}: an admin API on a non-loopback address needs a token (--admin-token-file PATH or {TOKEN_ENV}); bind 127.0.0.1 or give one")]
    PublicWithoutToken(SocketAddr),
    #[error("--admin-token-file {path}: {source}")]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{origin}: {why}")]
    BadToken { origin: String, why: &'static str },
    #[error("give the admin token once: --admin-token-file or {TOKEN_ENV}, not both")]
    TwoTokens,
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
}

impl AdminArgs {
    /// The checked configuration, or `None` without `--admin-addr`.
    pub(crate) fn config(&self) -> Result<Option<AdminConfig>, AdminConfigError> {
        let Some(addr) = self.addr else {
            return Ok(None);
        };
        let from_env = std::env::var_os(TOKEN_ENV);
        let token = match (&self.admin_token_file, from_env) {
            (Some(_), Some(_)) => return Err(AdminConfigError::TwoTokens),
            (Some(path), None) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    AdminConfigError::TokenFile {
                        path: path.clone(),
                        source,
                    }
                })?;
                Some(Token::new(&text).map_err(|why| AdminConfigError::BadToken {
                    origin: format!("--admin-token-file {}", path.display()),
                    why,
                })?)
            }
            (None, Some(value)) => {
                let text = value.to_str().ok_or(AdminConfigError::BadToken {
                    origin: TOKEN_ENV.into(),
                    why: "the token is not UTF-8",
                })?;
                Some(Token::new(text).map_err(|why| AdminConfigError::BadToken {
                    origin: TOKEN_ENV.into(),
                    why,
                })?)
            }
            (None, None) => None,
        };
        if token.is_none() && !addr.ip().is_loopback() {
            return Err(AdminConfigError::PublicWithoutToken(addr));
        }
        let tls = match (&self.admin_tls_cert, &self.admin_tls_key) {
            (Some(cert), Some(key)) => Some(super::tls::server_config(cert, key)?),
            _ => None,
        };
        Ok(Some(AdminConfig {
            tls,
            addr,
            token,
            allowed_hosts: self.allowed_hosts.clone(),
            max_connections: self.admin_max_connections as usize,
            header_timeout: Duration::from_secs(self.admin_header_timeout),
        }))
    }
}

/// `ADDR:PORT`, or a bare `PORT` on 127.0.0.1.
pub(crate) fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse()
        .map_err(|_| format!("`{text}` is neither PORT nor ADDR:PORT (127.0.0.1:9464, [::1]:9464)"))
}

/// A host name or IP address, without a port: stored in the form a `Host` header has.
fn parse_host(text: &str) -> Result<String, String> {
    let name = text.trim().to_ascii_lowercase();
    if let Ok(v6) = name.parse::<std::net::Ipv6Addr>() {
        return Ok(format!("[{v6}]"));
    }
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    let bracketed = name.starts_with('[') && name.ends_with(']');
    if name.is_empty() || !(bracketed || name.chars().all(fits)) {
        return Err(format!(
            "`{text}` is not a host name (letters, digits, `.`, `-`; no port, no scheme)"
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_binds_loopback() {
        assert_eq!(parse_addr("9464").unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(parse_addr("[::1]:1").unwrap().to_string(), "[::1]:1");
        assert!(parse_addr("localhost:1").is_err());
    }

    #[test]
    fn allowed_hosts_take_the_form_of_a_host_header() {
        assert_eq!(parse_host("Admin.Example").unwrap(), "admin.example");
        assert_eq!(parse_host("::1").unwrap(), "[::1]");
        assert!(parse_host("http://x").is_err());
        assert!(parse_host("x:80").is_err());
    }
}
