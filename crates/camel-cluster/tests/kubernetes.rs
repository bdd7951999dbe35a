//! The lease contract on Kubernetes Leases, against a fake API server: no real one can
//! run here. The fake keeps Leases in memory and does what the API server does that the
//! store relies on: `GET`, `POST` (409 when the Lease exists), `PUT` (409 unless the
//! body's `resourceVersion` is the stored one) and `DELETE`, with a new
//! `resourceVersion` on every write.

#![cfg(feature = "kubernetes")]

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use camel_cluster::{KubernetesLeaseStore, KubernetesTarget, LeaseStore};
use serde_json::{json, Value};

#[derive(Default)]
struct Fake {
    leases: Mutex<HashMap<(String, String), Value>>,
    version: AtomicU64,
    conflicts: AtomicU64,
    /// Set: right after the next `GET` is answered, somebody else writes the Lease (its
    /// `resourceVersion` changes, nothing else), as a concurrent writer would.
    interpose: std::sync::atomic::AtomicBool,
}

type Shared = Arc<Fake>;

fn status(code: StatusCode, reason: &str, message: String) -> Response {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "code": code.as_u16(),
    });
    (code, Json(body)).into_response()
}

impl Fake {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Value>> {
        self.leases.lock().unwrap()
    }

    /// Stores `body` under a fresh resourceVersion and returns what was stored.
    fn stamp(&self, ns: &str, name: &str, mut body: Value) -> Value {
        let version = self.version.fetch_add(1, Ordering::SeqCst) + 1;
        body["metadata"]["resourceVersion"] = json!(version.to_string());
        body["metadata"]["namespace"] = json!(ns);
        body["metadata"]["name"] = json!(name);
        body["apiVersion"] = json!("coordination.k8s.io/v1");
        body["kind"] = json!("Lease");
        self.lock()
            .insert((ns.to_string(), name.to_string()), body.clone());
        body
    }
}

async fn read(State(fake): State<Shared>, Path((ns, name)): Path<(String, String)>) -> Response {
    let mut leases = fake.lock();
    match leases.get_mut(&(ns, name.clone())) {
        Some(lease) => {
            let answer = Json(lease.clone()).into_response();
            if fake.interpose.swap(false, Ordering::SeqCst) {
                let version = fake.version.fetch_add(1, Ordering::SeqCst) + 1;
                lease["metadata"]["resourceVersion"] = json!(version.to_string());
            }
            answer
        }
        None => status(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("leases \"{name}\" not found"),
        ),
    }
}

async fn create(
    State(fake): State<Shared>,
    Path(ns): Path<String>,
    Json(body): Json<Value>,
) -> Response {
    let Some(name) = body["metadata"]["name"].as_str().map(str::to_string) else {
        return status(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            "no name".into(),
        );
    };
    // Check and insert under one lock, as the API server's storage does.
    let mut leases = fake.lock();
    if leases.contains_key(&(ns.clone(), name.clone())) {
        fake.conflicts.fetch_add(1, Ordering::SeqCst);
        return status(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("leases \"{name}\" already exists"),
        );
    }
    leases.insert((ns.clone(), name.clone()), Value::Null);
    drop(leases);
    (StatusCode::CREATED, Json(fake.stamp(&ns, &name, body))).into_response()
}

async fn replace(
    State(fake): State<Shared>,
    Path((ns, name)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Response {
    let mut leases = fake.lock();
    let Some(stored) = leases.get(&(ns.clone(), name.clone())) else {
        return status(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("leases \"{name}\" not found"),
        );
    };
    if body["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"] {
        fake.conflicts.fetch_add(1, Ordering::SeqCst);
        return status(
            StatusCode::CONFLICT,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on leases \"{name}\": the object has been modified"
            ),
        );
    }
    // Reserve the slot so no other write slips in between.
    leases.insert((ns.clone(), name.clone()), Value::Null);
    drop(leases);
    Json(fake.stamp(&ns, &name, body)).into_response()
}

async fn delete(State(fake): State<Shared>, Path((ns, name)): Path<(String, String)>) -> Response {
    match fake.lock().remove(&(ns, name.clone())) {
        Some(_) => Json(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200})).into_response(),
        None => status(StatusCode::NOT_FOUND, "NotFound", format!("leases \"{name}\" not found")),
    }
}

/// Starts the fake on a free port; returns its state and URL.
async fn fake_api_server() -> (Shared, String) {
    let fake = Shared::default();
    let app = Router::new()
        .route(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
            axum::routing::post(create),
        )
        .route(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}",
            get(read).put(replace).delete(delete),
        )
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, url)
}

async fn store(url: &str) -> Arc<dyn LeaseStore> {
    let target = KubernetesTarget {
        url: url.to_string(),
        kubeconfig: None,
        namespace: "camel-test".into(),
        prefix: "camel-".into(),
    };
    Arc::new(
        KubernetesLeaseStore::connect(&target)
            .await
            .expect("client"),
    )
}

#[tokio::test]
async fn one_of_two_contenders_wins() {
    let (fake, url) = fake_api_server().await;
    support::one_of_two_wins(store(&url).await, store(&url).await).await;
    // Both really contended through the API server's optimistic concurrency.
    assert!(!fake.lock().is_empty());
}

#[tokio::test]
async fn a_holder_cut_off_loses_and_the_other_takes_over_with_a_higher_epoch() {
    let (_fake, url) = fake_api_server().await;
    support::cut_off_holder_loses_and_the_other_takes_over(store(&url).await, store(&url).await)
        .await;
}

#[tokio::test]
async fn a_stop_releases_the_lease() {
    let (_fake, url) = fake_api_server().await;
    support::stop_hands_over_at_once(store(&url).await, store(&url).await).await;
}

#[tokio::test]
async fn a_write_by_someone_else_is_a_loss_and_the_epoch_survives_a_release() {
    let (fake, url) = fake_api_server().await;
    let s = store(&url).await;
    let ns = support::unique("Rival_ns");
    let first = s
        .try_acquire(&ns, "a", support::LEASE)
        .await
        .unwrap()
        .expect("a free lease is granted");
    assert_eq!(first.epoch, 1);
    let renewed = s.renew(&first, support::LEASE).await.unwrap();
    assert_eq!(renewed.as_ref(), Some(&first), "the holder renews");
    // Released: the Lease stays with its transitions, so the next epoch is higher.
    s.release(&first).await.unwrap();
    assert!(s.leader(&ns).await.unwrap().is_none());
    let second = s
        .try_acquire(&ns, "b", support::LEASE)
        .await
        .unwrap()
        .expect("a released lease is granted");
    assert_eq!(second.epoch, 2);
    let named = s.leader(&ns).await.unwrap().expect("b leads");
    assert_eq!((named.holder.as_str(), named.epoch), ("b", 2));
    // Another client (client-go, kubectl) takes it over in the API server.
    {
        let mut leases = fake.lock();
        let (key, lease) = leases
            .iter_mut()
            .find(|(k, _)| k.1.starts_with("camel-rival-ns-"))
            .expect("the lease is named from the namespace as a DNS name");
        assert_eq!(key.0, "camel-test");
        lease["spec"]["holderIdentity"] = json!("intruder");
        lease["metadata"]["resourceVersion"] = json!("999999");
    }
    assert_eq!(
        s.renew(&second, support::LEASE).await.unwrap(),
        None,
        "a lease written by another holder is lost"
    );
    // A renewal that races another write gets the API server's 409: lost too.
    let ns2 = support::unique("race");
    let third = s
        .try_acquire(&ns2, "c", support::LEASE)
        .await
        .unwrap()
        .expect("granted");
    let before = fake.conflicts.load(Ordering::SeqCst);
    fake.interpose.store(true, Ordering::SeqCst);
    assert_eq!(s.renew(&third, support::LEASE).await.unwrap(), None);
    assert_eq!(
        fake.conflicts.load(Ordering::SeqCst),
        before + 1,
        "by a 409"
    );
}

#[tokio::test]
async fn an_unreachable_api_server_is_a_store_error_not_a_grant() {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let s = store(&url).await;
    let e = s
        .try_acquire("ns", "a", support::LEASE)
        .await
        .expect_err("no API server");
    assert!(e.to_string().starts_with("kubernetes lease store"), "{e}");
}
