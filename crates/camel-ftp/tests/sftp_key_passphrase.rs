//! SFTP login with encrypted private keys (`privateKeyPassphrase`) against the sshd
//! `.ci/ftp-servers` starts: an OpenSSH key and a PKCS#8 PEM key, both encrypted with a
//! test passphrase, log in and a file is consumed; a wrong or missing passphrase fails
//! with an error naming the option and never showing a passphrase.

mod support;

use std::sync::Arc;

use support::{encrypted_keys, eventually, recording, send, Seen};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypted_keys_log_in_with_their_passphrase() {
    let Some(keys) = encrypted_keys() else {
        return;
    };
    let server = &keys.server;
    // privateKeyFile for the OpenSSH key, Camel's privateKeyUri (file:) for the PEM one.
    for (what, key) in [
        ("openssh", format!("privateKeyFile={}", keys.openssh)),
        ("pem", format!("privateKeyUri=file:{}", keys.pem)),
    ] {
        let dir = server.folder(&format!("passphrase-{what}"));
        server.put(&format!("{dir}/in.txt"), what.as_bytes());
        let seen = Arc::new(Seen::default());
        let options = format!(
            "{key}&privateKeyPassphrase={}&delete=true&initialDelay=0&delay=50",
            keys.passphrase
        );
        let (ctx, run) = server.start(&server.uri(&dir, &options), recording(&seen, ""));
        seen.until(&format!("in.txt with the {what} key"), |s| {
            s.count("in.txt") == 1
        })
        .await;
        eventually("in.txt deleted", || server.files(&dir).is_empty()).await;
        let bodies = seen.exchanges.lock().unwrap().clone();
        assert_eq!(bodies, [("in.txt".to_string(), what.as_bytes().to_vec())]);
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_passphrase_fails_clearly_without_showing_it() {
    let Some(keys) = encrypted_keys() else {
        return;
    };
    let server = &keys.server;
    for key in [&keys.openssh, &keys.pem] {
        let uri = server.uri(
            "never",
            &format!("privateKeyFile={key}&privateKeyPassphrase=not-the-pass-93"),
        );
        let err = send(server, &uri, "x", Some("a.txt"))
            .await
            .expect_err("a wrong passphrase cannot log in");
        let text = format!("{err} {err:?}");
        assert!(text.contains("privateKeyPassphrase"), "{text}");
        assert!(text.contains("wrong passphrase"), "{text}");
        assert!(text.contains(key.as_str()), "names the key file: {text}");
        assert!(!text.contains("not-the-pass-93"), "{text}");
        assert!(!text.contains(&keys.passphrase), "{text}");
        let endpoint = format!("{:?}", server.endpoint(&uri));
        assert!(!endpoint.contains("not-the-pass-93"), "{endpoint}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encrypted_key_without_passphrase_fails_clearly() {
    let Some(keys) = encrypted_keys() else {
        return;
    };
    let server = &keys.server;
    for key in [&keys.openssh, &keys.pem] {
        let uri = server.uri("never", &format!("privateKeyFile={key}"));
        let err = send(server, &uri, "x", Some("a.txt"))
            .await
            .expect_err("an encrypted key needs its passphrase");
        let text = err.to_string();
        assert!(text.contains("is encrypted"), "{text}");
        assert!(text.contains("privateKeyPassphrase"), "{text}");
    }
}
