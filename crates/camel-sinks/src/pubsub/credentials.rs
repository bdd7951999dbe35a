//! Google credentials for the Pub/Sub sink: where they are found (Application Default
//! Credentials) and how each kind becomes an access token.
//!
//! The order is Google's own (ADR 0084):
//!
//! 1. the file named by `GOOGLE_APPLICATION_CREDENTIALS` (a service-account key or an
//!    `authorized_user` file); set but unreadable is an error, not a fall-through;
//! 2. gcloud's well-known file, `$CLOUDSDK_CONFIG/application_default_credentials.json`
//!    or `~/.config/gcloud/application_default_credentials.json` (written by
//!    `gcloud auth application-default login`);
//! 3. the metadata server of Google's runtimes (GCE, GKE, Cloud Run), at
//!    `GCE_METADATA_HOST` or `metadata.google.internal`.
//!
//! A service account signs a JWT with its private key (RS256) and trades it at the key's
//! `token_uri`; an authorized user trades its refresh token at `token_uri` (Google's
//! default when the file names none).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use camel_api::CamelError;
use serde::Deserialize;

/// The OAuth scope a publish needs.
pub(crate) const PUBSUB_SCOPE: &str = "https://www.googleapis.com/auth/pubsub";
/// Google's token endpoint, for files that do not name one.
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// How long a signed assertion is valid (Google's maximum).
const ASSERTION_LIFETIME_SECS: u64 = 3600;
/// The metadata server's host when `GCE_METADATA_HOST` is not set.
pub(crate) const DEFAULT_METADATA_HOST: &str = "metadata.google.internal";

/// Where Application Default Credentials are looked for: read from the process
/// environment by [`AdcEnvironment::from_process`], or given (tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AdcEnvironment {
    /// `GOOGLE_APPLICATION_CREDENTIALS`.
    pub(crate) credentials_file: Option<PathBuf>,
    /// gcloud's well-known file (whether it exists is checked when resolving).
    pub(crate) well_known_file: Option<PathBuf>,
    /// The metadata server (`GCE_METADATA_HOST`, else `metadata.google.internal`).
    pub(crate) metadata_host: String,
}

impl AdcEnvironment {
    /// The locations this process would use.
    pub(crate) fn from_process(metadata_host: Option<String>) -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let well_known_dir = var("CLOUDSDK_CONFIG").map(PathBuf::from).or_else(|| {
            if cfg!(windows) {
                var("APPDATA").map(|d| PathBuf::from(d).join("gcloud"))
            } else {
                var("HOME").map(|h| PathBuf::from(h).join(".config").join("gcloud"))
            }
        });
        AdcEnvironment {
            credentials_file: var("GOOGLE_APPLICATION_CREDENTIALS").map(PathBuf::from),
            well_known_file: well_known_dir.map(|d| d.join("application_default_credentials.json")),
            metadata_host: metadata_host.unwrap_or_else(metadata_host_from_env),
        }
    }

    /// The credentials these locations give, in Google's order.
    pub(crate) fn resolve(&self) -> Result<Credentials, CamelError> {
        if let Some(file) = &self.credentials_file {
            return Credentials::from_file(file).map_err(|e| {
                CamelError::processor(format!(
                    "GOOGLE_APPLICATION_CREDENTIALS names `{}`: {e}",
                    file.display()
                ))
            });
        }
        if let Some(file) = self.well_known_file.as_ref().filter(|f| f.is_file()) {
            return Credentials::from_file(file);
        }
        Ok(Credentials::Metadata {
            host: self.metadata_host.clone(),
        })
    }
}

/// `GCE_METADATA_HOST`, as Google's libraries read it, else the runtimes' host name.
pub(crate) fn metadata_host_from_env() -> String {
    std::env::var("GCE_METADATA_HOST")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_METADATA_HOST.to_string())
}

/// One kind of Google credentials.
pub(crate) enum Credentials {
    /// A service-account key: tokens for a JWT signed with its key.
    ServiceAccount(Box<ServiceAccount>),
    /// A user's refresh token (`gcloud auth application-default login`).
    AuthorizedUser(AuthorizedUser),
    /// The metadata server of the runtime the process runs on.
    Metadata {
        /// Host (and port) of the metadata server, or a base URL.
        host: String,
    },
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::ServiceAccount(s) => write!(f, "ServiceAccount({})", s.client_email),
            Credentials::AuthorizedUser(_) => f.write_str("AuthorizedUser(..)"),
            Credentials::Metadata { host } => write!(f, "Metadata({host})"),
        }
    }
}

/// The fields of a credentials file this sink uses.
#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: String,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    token_uri: Option<String>,
}

/// A service account's key, ready to sign assertions.
pub(crate) struct ServiceAccount {
    pub(crate) client_email: String,
    key_id: Option<String>,
    key: ring::signature::RsaKeyPair,
    pub(crate) token_uri: String,
}

/// A user's OAuth client and refresh token.
pub(crate) struct AuthorizedUser {
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    pub(crate) refresh_token: String,
    pub(crate) token_uri: String,
}

impl Credentials {
    /// Reads a credentials file (a service-account key or an `authorized_user` file).
    pub(crate) fn from_file(path: &Path) -> Result<Self, CamelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CamelError::processor(format!(
                "reading Google credentials `{}`: {e}",
                path.display()
            ))
        })?;
        Credentials::from_json(&text).map_err(|e| {
            CamelError::processor(format!("Google credentials `{}`: {e}", path.display()))
        })
    }

    /// Parses the JSON of a credentials file; the error says what is wrong, never a
    /// secret.
    pub(crate) fn from_json(text: &str) -> Result<Self, String> {
        let file: CredentialsFile =
            serde_json::from_str(text).map_err(|e| format!("not a credentials file: {e}"))?;
        let need = |field: Option<String>, name: &str| {
            field
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("`{}` credentials need `{name}`", file.kind))
        };
        let token_uri = file
            .token_uri
            .clone()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| DEFAULT_TOKEN_URI.to_string());
        match file.kind.as_str() {
            "service_account" => {
                let pem = need(file.private_key.clone(), "private_key")?;
                Ok(Credentials::ServiceAccount(Box::new(ServiceAccount {
                    client_email: need(file.client_email.clone(), "client_email")?,
                    key_id: file.private_key_id.clone(),
                    key: rsa_key(&pem)?,
                    token_uri,
                })))
            }
            "authorized_user" => Ok(Credentials::AuthorizedUser(AuthorizedUser {
                client_id: need(file.client_id.clone(), "client_id")?,
                client_secret: need(file.client_secret.clone(), "client_secret")?,
                refresh_token: need(file.refresh_token.clone(), "refresh_token")?,
                token_uri,
            })),
            other => Err(format!(
                "credentials of type `{other}` are not supported (service_account and authorized_user are)"
            )),
        }
    }
}

/// An RSA private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, what Google issues) or
/// PKCS#1 (`BEGIN RSA PRIVATE KEY`).
fn rsa_key(pem: &str) -> Result<ring::signature::RsaKeyPair, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let der = STANDARD
        .decode(body.as_bytes())
        .map_err(|_| "`private_key` is not PEM".to_string())?;
    let parsed = if pem.contains("BEGIN RSA PRIVATE KEY") {
        ring::signature::RsaKeyPair::from_der(&der).map_err(|e| e.to_string())
    } else {
        ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| e.to_string())
    };
    parsed.map_err(|e| format!("`private_key` is not an RSA key ring can use: {e}"))
}

impl ServiceAccount {
    /// A signed JWT asking for `scope`, valid for an hour from `now` (seconds since the
    /// epoch).
    pub(crate) fn assertion(&self, scope: &str, now: u64) -> Result<String, CamelError> {
        let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
        if let Some(kid) = &self.key_id {
            header["kid"] = kid.as_str().into();
        }
        let claims = serde_json::json!({
            "iss": self.client_email,
            "scope": scope,
            "aud": self.token_uri,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &ring::signature::RSA_PKCS1_SHA256,
                &ring::rand::SystemRandom::new(),
                signed.as_bytes(),
                &mut signature,
            )
            .map_err(|_| CamelError::processor("signing the service-account assertion failed"))?;
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// Seconds since the epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_and_missing_fields_are_named_without_secrets() {
        let err = Credentials::from_json(r#"{"type":"external_account"}"#).unwrap_err();
        assert!(
            err.contains("`external_account` are not supported"),
            "{err}"
        );
        let err = Credentials::from_json(
            r#"{"type":"authorized_user","client_id":"c","client_secret":"s3cr3t"}"#,
        )
        .unwrap_err();
        assert!(err.contains("refresh_token"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
        let err = Credentials::from_json(
            r#"{"type":"service_account","client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}"#,
        )
        .unwrap_err();
        assert!(err.contains("not an RSA key"), "{err}");
    }

    #[test]
    fn an_authorized_user_without_token_uri_uses_googles() {
        let Ok(Credentials::AuthorizedUser(u)) = Credentials::from_json(
            r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"}"#,
        ) else {
            panic!("an authorized_user file parses");
        };
        assert_eq!(u.token_uri, DEFAULT_TOKEN_URI);
    }

    #[test]
    fn the_order_is_the_variable_then_the_well_known_file_then_the_metadata_server() {
        let dir = std::env::temp_dir().join(format!("camel-adc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let user = dir.join("user.json");
        std::fs::write(
            &user,
            r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","token_uri":"http://127.0.0.1:1/token"}"#,
        )
        .unwrap();
        let missing = dir.join("missing.json");
        let env = |file: Option<&Path>, well_known: &Path| AdcEnvironment {
            credentials_file: file.map(Path::to_path_buf),
            well_known_file: Some(well_known.to_path_buf()),
            metadata_host: "127.0.0.1:9".into(),
        };
        assert!(matches!(
            env(None, &missing).resolve(),
            Ok(Credentials::Metadata { host }) if host == "127.0.0.1:9"
        ));
        assert!(matches!(
            env(None, &user).resolve(),
            Ok(Credentials::AuthorizedUser(_))
        ));
        assert!(matches!(
            env(Some(&user), &missing).resolve(),
            Ok(Credentials::AuthorizedUser(_))
        ));
        let err = env(Some(&missing), &user)
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("GOOGLE_APPLICATION_CREDENTIALS"),
            "a named file that cannot be read is an error, not a fall-through: {err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
