//! Implicit FTPS (`isImplicit=true`) against the vsftpd `.ci/ftp-servers` starts with
//! `implicit_ssl=YES` (TLS from the first byte): an upload and a consumed file, and a
//! client in the wrong mode failing with a clear error within its connect timeout.
//!
//! The server forces TLS on data connections too (`force_local_data_ssl`): a transfer
//! succeeds only if the client asked for protected data (`PROT P`).

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{eventually, implicit_ftps, recording, send, Seen};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_is_uploaded_and_consumed_over_implicit_ftps() {
    let Some(server) = implicit_ftps() else {
        return;
    };
    let dir = server.folder("implicit");
    send(
        &server,
        &server.uri(&dir, "tempPrefix=.part-"),
        "over TLS",
        Some("up.txt"),
    )
    .await
    .unwrap_or_else(|e| panic!("upload over implicit FTPS: {e}"));
    assert_eq!(
        std::fs::read_to_string(server.path(&format!("{dir}/up.txt"))).ok(),
        Some("over TLS".to_string())
    );
    assert_eq!(server.files(&dir), ["up.txt"], "no temporary file left");

    let seen = Arc::new(Seen::default());
    let uri = server.uri(&dir, "delete=true&initialDelay=0&delay=50");
    let (ctx, run) = server.start(&uri, recording(&seen, ""));
    seen.until("up.txt", |s| s.count("up.txt") == 1).await;
    eventually("up.txt deleted", || server.files(&dir).is_empty()).await;
    let bodies = seen.exchanges.lock().unwrap().clone();
    assert_eq!(bodies, [("up.txt".to_string(), b"over TLS".to_vec())]);
    ctx.cancellation().cancel();
    run.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_client_on_the_implicit_port_fails_within_its_timeout() {
    let Some(server) = implicit_ftps() else {
        return;
    };
    // The same trust store, without isImplicit: the client waits for a plain-text
    // greeting, the server for a TLS hello.
    let explicit = server.with_auth(&server.auth().replace("&isImplicit=true", ""));
    let uri = explicit.uri("never", "connectTimeout=2s");
    let started = Instant::now();
    let err = send(&explicit, &uri, "x", Some("a.txt"))
        .await
        .expect_err("an explicit client cannot log in on an implicit port");
    let took = started.elapsed();
    let text = err.to_string();
    assert!(text.contains("no answer within 2s"), "{text}");
    assert!(text.contains("isImplicit=true"), "the hint: {text}");
    assert!(!text.contains("camel-ftp-test"), "no password: {text}");
    assert!(
        took < Duration::from_secs(6),
        "bounded by connectTimeout: {took:?}"
    );
    println!("explicit client on the implicit port failed after {took:?}: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_implicit_client_on_an_explicit_port_fails_clearly() {
    let (Some(implicit), Some(explicit_url)) = (
        implicit_ftps(),
        camel_api::test_support::service_from_env("CAMEL_TEST_FTPS_URL"),
    ) else {
        return;
    };
    // The explicit server greets in plain text, which is no TLS record.
    let uri = format!("{explicit_url}/never?{}&connectTimeout=5s", implicit.auth());
    let started = Instant::now();
    let err = send(&implicit, &uri, "x", Some("a.txt"))
        .await
        .expect_err("an implicit client cannot log in on an explicit port");
    let text = err.to_string();
    assert!(text.contains("starting implicit TLS"), "{text}");
    assert!(text.contains("isImplicit=false"), "the hint: {text}");
    println!(
        "implicit client on the explicit port failed after {:?}: {text}",
        started.elapsed()
    );
}
