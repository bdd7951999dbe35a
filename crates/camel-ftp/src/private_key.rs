//! The SFTP login key: read from `privateKeyFile` (or `privateKeyUri`) and, when it is
//! encrypted, decrypted with `privateKeyPassphrase`.
//!
//! russh's reader decrypts OpenSSH keys (`ssh-keygen -N …`), encrypted PKCS#8 PEM
//! (`BEGIN ENCRYPTED PRIVATE KEY`), legacy PEM RSA keys encrypted with AES-128-CBC
//! (`ssh-keygen -m PEM`), and PuTTY keys (not tested here); other legacy PEM encryption
//! is refused with a message saying how to convert the key. Whether a key is encrypted is found out before decrypting, so that a missing
//! passphrase and a wrong one are told apart, and a passphrase given for a key that is not
//! encrypted is unused (as Camel does) instead of breaking the login. No error here holds
//! the passphrase: only the option's name.
//!
//! Decrypting an OpenSSH key runs bcrypt on purpose slowly (16 rounds by default):
//! [`load`] is blocking and is called off the runtime's threads.

use std::path::{Path, PathBuf};

use russh::keys::{decode_secret_key, Error as KeysError, PrivateKey};

/// Why the private key could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The file could not be read.
    #[error("cannot read private key `{}` (privateKeyFile): {reason}", file.display())]
    Unreadable { file: PathBuf, reason: String },
    /// The key is encrypted and no passphrase was given.
    #[error(
        "private key `{}` is encrypted: give its passphrase as privateKeyPassphrase",
        file.display()
    )]
    PassphraseMissing { file: PathBuf },
    /// The passphrase given does not decrypt the key.
    #[error(
        "private key `{}` cannot be decrypted with the privateKeyPassphrase given (wrong passphrase?): {reason}",
        file.display()
    )]
    PassphraseWrong { file: PathBuf, reason: String },
    /// A legacy PEM key whose encryption russh does not undo: a cipher other than
    /// AES-128-CBC, or a key other than RSA.
    #[error(
        "private key `{}` uses {how}, which cannot be decrypted here; \
         re-encrypt it in OpenSSH's format (ssh-keygen -p -f <file>)",
        file.display()
    )]
    UnsupportedEncryption { file: PathBuf, how: String },
    /// Not a key in a format read here.
    #[error("private key `{}` (privateKeyFile) cannot be read as a key: {reason}", file.display())]
    Invalid { file: PathBuf, reason: String },
}

/// What the text of a PEM or PuTTY key says about its encryption.
#[derive(Debug, PartialEq, Eq)]
enum Marked {
    /// Not said: an OpenSSH key tells when decoded, other keys are not encrypted.
    Unsaid,
    Encrypted,
    /// Legacy PEM encryption russh does not undo: what it is.
    Unsupported(String),
}

/// Reads the key at `file`, decrypting it with `passphrase` if it is encrypted.
pub(crate) fn load(file: &Path, passphrase: Option<&str>) -> Result<PrivateKey, KeyError> {
    let text = std::fs::read_to_string(file).map_err(|e| KeyError::Unreadable {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })?;
    match marked(&text) {
        Marked::Encrypted => return decrypt(file, &text, passphrase),
        Marked::Unsupported(how) => {
            return Err(KeyError::UnsupportedEncryption {
                file: file.to_path_buf(),
                how,
            })
        }
        Marked::Unsaid => {}
    }
    match decode_secret_key(&text, None) {
        Ok(key) => {
            if passphrase.is_some() {
                tracing::debug!(key = %file.display(),
                    "the private key is not encrypted; privateKeyPassphrase is not used");
            }
            Ok(key)
        }
        Err(KeysError::KeyIsEncrypted) => decrypt(file, &text, passphrase),
        Err(e) => Err(KeyError::Invalid {
            file: file.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

fn decrypt(file: &Path, text: &str, passphrase: Option<&str>) -> Result<PrivateKey, KeyError> {
    let Some(passphrase) = passphrase else {
        return Err(KeyError::PassphraseMissing {
            file: file.to_path_buf(),
        });
    };
    decode_secret_key(text, Some(passphrase)).map_err(|e| KeyError::PassphraseWrong {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Reads the encryption markers of PKCS#8 PEM, legacy PEM and PuTTY keys.
fn marked(text: &str) -> Marked {
    let mut legacy_encrypted = false;
    let mut cipher = None;
    let mut rsa = false;
    for line in text.lines().map(str::trim) {
        rsa |= line == "-----BEGIN RSA PRIVATE KEY-----";
        if line == "-----BEGIN ENCRYPTED PRIVATE KEY-----" {
            return Marked::Encrypted;
        }
        if line == "Proc-Type: 4,ENCRYPTED" {
            legacy_encrypted = true;
        } else if let Some(info) = line.strip_prefix("DEK-Info:") {
            cipher = info.split(',').next().map(|c| c.trim().to_string());
        } else if let Some(how) = line.strip_prefix("Encryption:") {
            // PuTTY's header: `none` or the cipher.
            if how.trim() != "none" && text.trim_start().starts_with("PuTTY-User-Key-File-") {
                return Marked::Encrypted;
            }
        }
    }
    if !legacy_encrypted {
        return Marked::Unsaid;
    }
    // russh decrypts legacy PEM with AES-128-CBC, and reads only an RSA key out of it.
    match cipher.as_deref() {
        Some("AES-128-CBC") if rsa => Marked::Encrypted,
        Some(c) if rsa => Marked::Unsupported(format!("legacy PEM encryption ({c})")),
        Some(c) => Marked::Unsupported(format!("legacy PEM encryption ({c}) of a non-RSA key")),
        None => Marked::Unsupported("legacy PEM encryption without a DEK-Info line".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markers_of_encrypted_pem_and_putty_keys_are_read() {
        assert_eq!(
            marked("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n"),
            Marked::Encrypted
        );
        let legacy =
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0011\n";
        assert_eq!(marked(legacy), Marked::Encrypted);
        let des = legacy.replace("AES-128-CBC", "DES-EDE3-CBC");
        assert_eq!(
            marked(&des),
            Marked::Unsupported("legacy PEM encryption (DES-EDE3-CBC)".into())
        );
        let ec = legacy.replace("RSA PRIVATE", "EC PRIVATE");
        assert!(matches!(marked(&ec), Marked::Unsupported(how) if how.contains("non-RSA")));
        let putty = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: aes256-cbc\n";
        assert_eq!(marked(putty), Marked::Encrypted);
        assert_eq!(marked(&putty.replace("aes256-cbc", "none")), Marked::Unsaid);
        assert_eq!(
            marked("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n"),
            Marked::Unsaid
        );
    }

    #[test]
    fn errors_name_the_option_and_a_missing_file_is_unreadable() {
        let missing = Path::new("/nonexistent/camel-ftp-key");
        let err = load(missing, Some("never-shown-7")).unwrap_err();
        assert!(matches!(err, KeyError::Unreadable { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("privateKeyFile"), "{text}");
        assert!(!text.contains("never-shown-7"), "{text}");
        let err = decrypt(missing, "", None).unwrap_err();
        assert!(err.to_string().contains("privateKeyPassphrase"), "{err}");
    }

    #[test]
    fn a_file_that_is_no_key_is_invalid() {
        let file = tempfile::NamedTempFile::new().expect("temporary file");
        std::fs::write(file.path(), "not a key\n").expect("written");
        let err = load(file.path(), None).unwrap_err();
        assert!(matches!(err, KeyError::Invalid { .. }), "{err:?}");
    }
}
