//! Pub/Sub with Application Default Credentials, against a local stand-in for Google (an
//! axum server on 127.0.0.1 that plays the OAuth token endpoint, the metadata server and
//! Pub/Sub): a service-account key signs a JWT the stand-in verifies, an `authorized_user`
//! file trades its refresh token, and with neither the metadata server is asked; the
//! token each publish carried is recorded. No network beyond the loopback.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use camel_api::{Component, EndpointUri, Exchange};
use camel_sinks::pubsub::{PubSubCodec, PubSubComponent};
use camel_sinks::testing::HeaderContext;
use camel_sinks::{BatchCodec, EntryMeta, SendOutcome};
use serde_json::{json, Value};

/// The test key (tests/fixtures, made for these tests only, never used anywhere else).
const KEY_PEM: &str = include_str!("fixtures/test-only-rsa-key.pem");
const SA_EMAIL: &str = "relay@test-project.iam.gserviceaccount.com";

#[derive(Default)]
struct Seen {
    /// Grants the token endpoint honoured, in order (`jwt`, `refresh`, `metadata`).
    grants: Vec<String>,
    /// The `Authorization` of each publish.
    publishes: Vec<String>,
    /// Why a request was refused, if one was (asserted empty).
    refused: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

/// The public half of the test key, to verify assertions the sink signs.
fn public_key() -> Vec<u8> {
    let body: String = KEY_PEM
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let der = STANDARD.decode(body).unwrap();
    let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    use ring::signature::KeyPair;
    pair.public_key().as_ref().to_vec()
}

/// Checks a JWT-bearer assertion: signature, issuer, scope, audience, lifetime.
fn check_assertion(assertion: &str, audience: &str) -> Result<(), String> {
    let parts: Vec<&str> = assertion.split('.').collect();
    let [header, claims, signature] = parts[..] else {
        return Err(format!("not a JWT: {assertion}"));
    };
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|e| e.to_string())?;
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public_key(),
    )
    .verify(format!("{header}.{claims}").as_bytes(), &signature)
    .map_err(|_| "bad signature".to_string())?;
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
    let expect = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: {claims} {header}"))
        }
    };
    expect(header["alg"] == "RS256", "alg")?;
    expect(header["kid"] == "key-1", "kid")?;
    expect(claims["iss"] == SA_EMAIL, "iss")?;
    expect(
        claims["scope"] == "https://www.googleapis.com/auth/pubsub",
        "scope",
    )?;
    expect(claims["aud"] == audience, "aud")?;
    let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
    expect(
        matches!((iat, exp), (Some(i), Some(e)) if e == i + 3600),
        "lifetime",
    )
}

async fn token(
    State((seen, base)): State<(Shared, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Json<Value>, StatusCode> {
    let mut seen = seen.lock().unwrap();
    let grant = form.get("grant_type").map(String::as_str).unwrap_or("");
    let answer = match grant {
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
            let checked = check_assertion(
                form.get("assertion").map(String::as_str).unwrap_or(""),
                &format!("{base}/token"),
            );
            if let Err(why) = checked {
                seen.refused.push(why);
                return Err(StatusCode::BAD_REQUEST);
            }
            "jwt"
        }
        "refresh_token" => {
            let ok = form.get("client_id").is_some_and(|v| v == "client-1")
                && form.get("client_secret").is_some_and(|v| v == "secret-1")
                && form.get("refresh_token").is_some_and(|v| v == "refresh-1");
            if !ok {
                seen.refused.push(format!("refresh grant {form:?}"));
                return Err(StatusCode::BAD_REQUEST);
            }
            "refresh"
        }
        other => {
            seen.refused.push(format!("grant {other}"));
            return Err(StatusCode::BAD_REQUEST);
        }
    };
    seen.grants.push(answer.into());
    let n = seen.grants.len();
    Ok(Json(json!({
        "access_token": format!("{answer}-{n}"),
        "expires_in": 3600,
        "token_type": "Bearer"
    })))
}

async fn metadata(
    State((seen, _)): State<(Shared, String)>,
    headers: HeaderMap,
) -> Result<Json<Value>, StatusCode> {
    let mut seen = seen.lock().unwrap();
    if headers.get("metadata-flavor").is_none_or(|v| v != "Google") {
        seen.refused.push("metadata without Metadata-Flavor".into());
        return Err(StatusCode::FORBIDDEN);
    }
    seen.grants.push("metadata".into());
    let n = seen.grants.len();
    Ok(Json(
        json!({"access_token": format!("metadata-{n}"), "expires_in": 3600, "token_type": "Bearer"}),
    ))
}

async fn publish_endpoint(
    State((seen, _)): State<(Shared, String)>,
    headers: HeaderMap,
) -> Json<Value> {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    seen.lock().unwrap().publishes.push(auth);
    Json(json!({"messageIds": ["1"]}))
}

/// Starts the stand-in; returns its base URL and what it saw.
async fn fake_google() -> (String, Shared) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Shared::default();
    let app = Router::new()
        .route("/token", post(token))
        .route(
            "/computeMetadata/v1/instance/service-accounts/default/token",
            get(metadata),
        )
        .route("/v1/projects/p/topics/t:publish", post(publish_endpoint))
        .with_state((seen.clone(), base.clone()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

fn write(dir: &Path, name: &str, value: Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

fn service_account(dir: &Path, base: &str) -> PathBuf {
    write(
        dir,
        "service-account.json",
        json!({
            "type": "service_account",
            "project_id": "test-project",
            "private_key_id": "key-1",
            "private_key": KEY_PEM,
            "client_email": SA_EMAIL,
            "client_id": "1",
            "token_uri": format!("{base}/token"),
        }),
    )
}

fn authorized_user(dir: &Path, base: &str) -> PathBuf {
    write(
        dir,
        "application_default_credentials.json",
        json!({
            "type": "authorized_user",
            "client_id": "client-1",
            "client_secret": "secret-1",
            "refresh_token": "refresh-1",
            "token_uri": format!("{base}/token"),
        }),
    )
}

async fn publish(codec: &PubSubCodec) {
    let meta = EntryMeta {
        group: None,
        idempotency_key: "k".into(),
    };
    let entry = codec.encode(&Exchange::new("x"), meta).unwrap();
    match codec.send_batch(&[entry]).await {
        SendOutcome::Answered(r) => assert!(r[0].is_ok(), "{r:?}"),
        other => panic!("publish failed: {other:?}"),
    }
}

fn codec(base: &str) -> PubSubCodec {
    PubSubCodec::new("projects/p/topics/t", base, None)
}

#[tokio::test]
async fn google_application_credentials_with_a_service_account_key_signs_a_jwt_once() {
    let (base, seen) = fake_google().await;
    let dir = tempfile::tempdir().unwrap();
    let key = service_account(dir.path(), &base);
    // The well-known file exists too: the variable comes first.
    let user = authorized_user(dir.path(), &base);
    let codec = codec(&base).with_default_credentials_at(Some(key), Some(user), &base);
    publish(&codec).await;
    publish(&codec).await;
    let seen = seen.lock().unwrap();
    assert!(seen.refused.is_empty(), "{:?}", seen.refused);
    assert_eq!(seen.grants, ["jwt"], "one token, reused while valid");
    assert_eq!(seen.publishes, ["Bearer jwt-1", "Bearer jwt-1"]);
}

#[tokio::test]
async fn without_the_variable_gclouds_well_known_file_trades_its_refresh_token() {
    let (base, seen) = fake_google().await;
    let dir = tempfile::tempdir().unwrap();
    let user = authorized_user(dir.path(), &base);
    let codec = codec(&base).with_default_credentials_at(None, Some(user), &base);
    publish(&codec).await;
    let seen = seen.lock().unwrap();
    assert!(seen.refused.is_empty(), "{:?}", seen.refused);
    assert_eq!(seen.grants, ["refresh"]);
    assert_eq!(seen.publishes, ["Bearer refresh-1"]);
}

#[tokio::test]
async fn with_no_credentials_file_the_metadata_server_is_asked() {
    let (base, seen) = fake_google().await;
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("application_default_credentials.json");
    let host = base.trim_start_matches("http://").to_string();
    let codec = codec(&base).with_default_credentials_at(None, Some(absent), &host);
    publish(&codec).await;
    let seen = seen.lock().unwrap();
    assert!(seen.refused.is_empty(), "{:?}", seen.refused);
    assert_eq!(seen.grants, ["metadata"]);
    assert_eq!(seen.publishes, ["Bearer metadata-1"]);
}

#[tokio::test]
async fn a_service_account_key_file_given_on_the_endpoint_is_used_directly() {
    let (base, seen) = fake_google().await;
    let dir = tempfile::tempdir().unwrap();
    let key = service_account(dir.path(), &base);
    publish(&codec(&base).with_credentials_file(key)).await;
    assert_eq!(seen.lock().unwrap().publishes, ["Bearer jwt-1"]);
}

#[tokio::test]
async fn a_refused_token_request_fails_the_publish_and_names_the_endpoint() {
    let (base, seen) = fake_google().await;
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "user.json",
        json!({"type": "authorized_user", "client_id": "client-1", "client_secret": "wrong",
               "refresh_token": "refresh-1", "token_uri": format!("{base}/token")}),
    );
    let codec = codec(&base).with_default_credentials_at(Some(bad), None, "127.0.0.1:9");
    let meta = EntryMeta {
        group: None,
        idempotency_key: "k".into(),
    };
    let entry = codec.encode(&Exchange::new("x"), meta).unwrap();
    let SendOutcome::Failed(e) = codec.send_batch(&[entry]).await else {
        panic!("a publish without a token fails whole");
    };
    let message = e.to_string();
    assert!(
        message.contains("/token") && message.contains("400"),
        "{message}"
    );
    assert!(
        !message.contains("wrong"),
        "no secret in the error: {message}"
    );
    assert!(seen.lock().unwrap().publishes.is_empty());
}

#[test]
fn the_endpoint_takes_a_key_file_and_builds_without_reading_credentials() {
    let component = PubSubComponent::new();
    let ctx = HeaderContext {
        route_id: Some("r".into()),
    };
    let build = |uri: &str| component.endpoint(EndpointUri::parse(uri).unwrap(), &ctx);
    // Nothing is read until the first publish: a missing file does not fail the build.
    assert!(build("pubsub:projects/p/topics/t?serviceAccountKey=file:/nowhere/key.json").is_ok());
    assert!(build("pubsub:projects/p/topics/t?token_source=adc&metadata_host=127.0.0.1:9").is_ok());
    let refused = build("pubsub:projects/p/topics/t?service_account_key=classpath:key.json")
        .unwrap_err()
        .to_string();
    assert!(refused.contains("must be a file path"), "{refused}");
}
