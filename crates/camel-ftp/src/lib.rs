//! `ftp:`, `ftps:` and `sftp:`: remote folders in and out, at least once.
//!
//! - In `from`, a polling consumer of a remote directory: list, filter (`include`,
//!   `exclude`, `antInclude`), wait until a file stops changing (`readLock=changed`),
//!   download, route, and only after the route succeeded delete the file (`delete`) or
//!   rename it (`move`). A failed route leaves the file (or renames it by `moveFailed`);
//!   the consumer then skips it for a while (1 s doubling to 60 s) so one bad file does not
//!   spin. A process killed mid-route leaves the file in place and the next run takes it
//!   again: nothing is lost, and a file whose route had finished but whose delete had not
//!   is delivered twice. Files above `spoolThreshold` are downloaded to a local file and
//!   handed over by path, as the `file` consumer's lazy body and the S3 consumer do.
//! - In `to`, a producer: upload the body as `fileName` (else `CamelFileName`), with
//!   `fileExist` and `tempPrefix` (upload under a temporary name, then rename, so a
//!   reader of the folder never sees half a file).
//!
//! FTP and FTPS (explicit `AUTH TLS`, or implicit with `isImplicit`) go through suppaftp
//! with rustls, SFTP through russh and russh-sftp (ADR 0162); a private key may be
//! encrypted (`privateKeyPassphrase`, ADR 0169). Option names follow Camel's `ftp`, `ftps` and `sftp`
//! components in snake_case (camelCase is accepted); the guide is `docs/components.md`
//! at the repository root, and ADR 0163 says how the consumer settles a file.
//!
//! ```
//! use camel_api::Component;
//! let schemes: Vec<String> = camel_ftp::components().iter().map(|c| c.scheme().to_string()).collect();
//! assert_eq!(schemes, ["ftp", "ftps", "sftp"]);
//! ```

use std::sync::Arc;

use camel_api::Component;

mod component;
mod consumer;
mod ftp;
pub mod headers;
mod idempotent;
mod options;
mod private_key;
mod producer;
mod read_lock;
mod remote;
mod sftp;

pub use component::FtpComponent;
pub use options::{
    AfterSuccess, Connection, ConsumerOptions, FileExist, FtpOptions, MoveTarget, ProducerOptions,
    ReadLock, DEFAULT_SPOOL_THRESHOLD, IDEMPOTENT_CAPACITY, IMPLICIT_FTPS_PORT,
};

/// The protocol of an endpoint, named by its scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `ftp:`, plain FTP.
    Ftp,
    /// `ftps:`, FTP over TLS: explicit (`AUTH TLS` on the FTP port), or implicit (TLS
    /// from the first byte, `isImplicit=true`).
    Ftps,
    /// `sftp:`, the SSH file transfer protocol.
    Sftp,
}

impl Protocol {
    /// The URI scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            Protocol::Ftp => "ftp",
            Protocol::Ftps => "ftps",
            Protocol::Sftp => "sftp",
        }
    }

    /// The port used when the URI gives none (implicit FTPS uses
    /// [`IMPLICIT_FTPS_PORT`] instead).
    pub fn default_port(self) -> u16 {
        match self {
            Protocol::Ftp | Protocol::Ftps => 21,
            Protocol::Sftp => 22,
        }
    }
}

/// The three components, ready to register.
pub fn components() -> Vec<Arc<dyn Component>> {
    vec![
        Arc::new(FtpComponent::new(Protocol::Ftp)),
        Arc::new(FtpComponent::new(Protocol::Ftps)),
        Arc::new(FtpComponent::new(Protocol::Sftp)),
    ]
}
