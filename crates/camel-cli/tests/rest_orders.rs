//! `examples/rest-orders` through the binary, called with a real HTTP client: the REST DSL,
//! its JSON binding and OpenAPI document, `sql:` and the outbox in one `transacted` step.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::admin_api::Camel;

/// The port of the first `serving http://…` line.
async fn http_base(camel: &mut Camel) -> String {
    let line = camel.wait_for("serving http://").await;
    let port = support::serving_port(&line);
    format!("http://127.0.0.1:{port}")
}

async fn call(req: reqwest::RequestBuilder) -> (u16, String, Value) {
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, content_type, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_orders_example_stores_publishes_and_documents() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rest-orders/routes.yaml");
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start_with(&example, dir.path(), &["--port", "0"]);
    let base = http_base(&mut camel).await;
    if !camel.log().iter().any(|l| l.contains("orders table ready")) {
        camel.wait_for("orders table ready").await;
    }
    let client = reqwest::Client::new();
    let orders = format!("{base}/api/orders");

    let (status, content_type, body) = call(
        client
            .post(&orders)
            .header("content-type", "application/json")
            .body(r#"{"item": "book", "qty": 2}"#),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(content_type, "application/json");
    let id = body["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("an id in {body}"));

    let (status, _, body) = call(client.get(format!("{orders}/{id}"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"id": id, "item": "book", "qty": 2}));

    let (status, _, body) = call(client.get(format!("{orders}/999999"))).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "no such order");

    // Not valid: refused by the route, nothing stored.
    let (status, _, body) = call(client.post(&orders).body(r#"{"item": "pen", "qty": 0}"#)).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("quantity"),
        "{body}"
    );
    let (_, _, next) = call(client.post(&orders).body(r#"{"item": "pen", "qty": 1}"#)).await;
    assert_eq!(
        next["id"].as_i64(),
        Some(id + 1),
        "the refused order took no id"
    );

    // Malformed JSON: 400 from the binding, with where the parser stopped.
    let (status, content_type, body) = call(
        client
            .post(&orders)
            .body("{\"item\": \"book\",\n \"qty\": }"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(content_type, "application/problem+json");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("line 2 column 9"), "{detail}");

    let (status, _, _) = call(client.delete(format!("{orders}/{id}"))).await;
    assert_eq!(status, 405);

    // The document of the declared operations.
    let (status, content_type, doc) = call(client.get(format!("{base}/api/openapi.json"))).await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(content_type, "application/json");
    assert_eq!(doc["openapi"], "3.0.3");
    assert_eq!(doc["info"]["title"], "Orders");
    assert_eq!(doc["servers"][0]["url"], "/api");
    let post = &doc["paths"]["/orders"]["post"];
    assert_eq!(post["operationId"], "createOrder");
    assert!(
        post["requestBody"]["content"]["application/json"].is_object(),
        "{post}"
    );
    assert_eq!(
        post["responses"]["201"]["description"],
        "the order is stored; its id"
    );
    let get = &doc["paths"]["/orders/{id}"]["get"];
    assert_eq!(get["parameters"][0]["name"], "id");
    assert_eq!(get["parameters"][0]["in"], "path");
    assert_eq!(get["parameters"][0]["schema"]["type"], "integer");
    assert!(get["responses"]["404"].is_object(), "{get}");

    // The event committed with the row reaches the relay.
    let line = camel.wait_for("order event").await;
    assert!(line.contains("book"), "{line}");
}
