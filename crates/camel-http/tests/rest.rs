//! The REST DSL on the shared server: YAML `rest:` items expanded into `platform-http:`
//! routes, JSON binding, media types, and the OpenAPI document checked against what was
//! declared.

mod support;

use camel_api::{Body, CamelError, Exchange};
use camel_core::RouteBuilder;
use serde_json::{json, Value};
use support::{client, local, start};

const ROUTES: &str = r#"
- restConfiguration:
    contextPath: /shop
    apiContextPath: /api-doc
    bindingMode: json
    apiProperty:
      - {key: api.title, value: Shop}
- rest:
    path: /items
    tag: items
    produces: application/json
    get:
      - path: /{sku}
        id: getItem
        to: direct:show
        param:
          - {name: sku, type: path, description: stock keeping unit}
          - {name: verbose, type: query, dataType: boolean, required: false}
      - path: /{sku}/raw
        produces: text/plain
        bindingMode: off
        to: direct:raw
    post:
      - id: addItem
        consumes: application/json
        type: Item
        to: direct:show
    put:
      - path: /{sku}
        to: direct:show
        apiDocs: false
- rest:
    path: /health
    disabled: true
    get:
      - to: direct:show
"#;

/// Echoes what the route received: the body's kind and value, and the path parameter.
fn show(mut ex: Exchange) -> Result<Exchange, CamelError> {
    let kind = match &ex.message.body {
        Body::Json(_) => "json",
        Body::Bytes(_) => "bytes",
        Body::Text(_) => "text",
        Body::Empty => "empty",
    };
    let body = ex.message.body.to_json().unwrap_or(Value::Null);
    let sku = ex.header("sku").map(|v| v.to_json());
    ex.message.body = Body::from(json!({"kind": kind, "body": body, "sku": sku}));
    Ok(ex)
}

async fn call(req: reqwest::RequestBuilder) -> (u16, String, String) {
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_operations_bind_json_and_are_documented() {
    let mut routes = camel_core::yaml::load_str(ROUTES, "rest.yaml").expect("the file loads");
    // Two verbs' routes on /shop/items/{sku}, one more on …/raw, one POST, one PUT, and
    // the document; nothing for the disabled group.
    assert_eq!(routes.len(), 5);
    routes.push(RouteBuilder::from("direct:show").process(show).build());
    routes.push(
        RouteBuilder::from("direct:raw")
            .process(|mut ex: Exchange| {
                let text = ex.message.body.as_text().map(|t| t.into_owned());
                ex.message.body = Body::from(format!("raw:{}", text.unwrap_or_default()));
                Ok(ex)
            })
            .build(),
    );
    let run = start(local(), routes, "/shop/api-doc").await;
    let http = client();

    // JSON in, JSON out; the path parameter is a header.
    let (status, ct, text) = call(
        http.post(run.url("/shop/items"))
            .header("content-type", "application/json")
            .body(r#"{"sku": "A-1", "qty": 3}"#),
    )
    .await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{text}");
    let got: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(got["kind"], "json");
    assert_eq!(got["body"]["qty"], 3);
    let (status, _, text) = call(http.get(run.url("/shop/items/A-1"))).await;
    assert_eq!(status, 200, "{text}");
    let got: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (got["kind"].as_str(), got["sku"].as_str()),
        (Some("empty"), Some("A-1"))
    );

    // Malformed JSON: 400 naming the line and column, before the route runs.
    let (status, ct, text) = call(
        http.post(run.url("/shop/items"))
            .body("{\n  \"sku\": \"A-1\",\n  \"qty\": 3,,\n}"),
    )
    .await;
    assert_eq!(
        (status, ct.as_str()),
        (400, "application/problem+json"),
        "{text}"
    );
    let problem: Value = serde_json::from_str(&text).unwrap();
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("line 3 column 12"), "{detail}");
    assert!(!detail.contains("A-1"), "the body is not echoed: {detail}");

    // Binding off for one operation: the bytes as sent, its own media type.
    let (status, ct, text) = call(http.get(run.url("/shop/items/A-1/raw")).body("{not json")).await;
    assert_eq!(
        (status, ct.as_str(), text.as_str()),
        (200, "text/plain", "raw:{not json")
    );

    // Methods not declared: 405; the disabled group: 404.
    let (status, _, _) = call(http.delete(run.url("/shop/items/A-1"))).await;
    assert_eq!(status, 405);
    let (status, _, _) = call(http.get(run.url("/shop/health"))).await;
    assert_eq!(status, 404);

    // The document at the configured path, listing exactly the documented operations.
    let (status, ct, text) = call(http.get(run.url("/shop/api-doc"))).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"));
    let doc: Value = serde_json::from_str(&text).expect("the document is JSON");
    check_openapi(&doc);
    assert_eq!(doc["info"]["title"], "Shop");
    assert_eq!(doc["servers"][0]["url"], "/shop");
    let operations: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |verb| (path.clone(), verb.clone()))
        })
        .collect();
    let mut operations = operations;
    operations.sort();
    let expected: Vec<(String, String)> = [
        ("/items", "post"),
        ("/items/{sku}", "get"),
        ("/items/{sku}/raw", "get"),
    ]
    .iter()
    .map(|(p, v)| (p.to_string(), v.to_string()))
    .collect();
    assert_eq!(operations, expected, "PUT has apiDocs: false");
    let get = &doc["paths"]["/items/{sku}"]["get"];
    assert_eq!(get["operationId"], "getItem");
    assert_eq!(get["tags"], json!(["items"]));
    assert_eq!(
        get["parameters"][1],
        json!({
            "name": "verbose", "in": "query", "required": false, "schema": {"type": "boolean"}
        })
    );
    let post = &doc["paths"]["/items"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["title"],
        "Item"
    );
    run.ctx.stop().await;
}

/// The structural rules of OpenAPI 3.0 the document must keep: version and info, every
/// operation with responses, every path parameter declared once as required, parameter
/// locations from the allowed set.
fn check_openapi(doc: &Value) {
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.0."));
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    for (path, item) in doc["paths"].as_object().expect("paths is a map") {
        assert!(path.starts_with('/'), "{path}");
        let names: Vec<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        for (verb, op) in item.as_object().unwrap() {
            assert!(
                ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
                    .contains(&verb.as_str()),
                "{verb}"
            );
            assert!(
                !op["responses"].as_object().unwrap().is_empty(),
                "{path} {verb}"
            );
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            for p in &params {
                let at = p["in"].as_str().unwrap();
                assert!(["path", "query", "header", "cookie"].contains(&at), "{p}");
                assert!(p["schema"].is_object(), "{p}");
                if at == "path" {
                    assert_eq!(p["required"], true, "{p}");
                    assert!(names.contains(&p["name"].as_str().unwrap()), "{p}");
                }
            }
            for name in &names {
                let n = params
                    .iter()
                    .filter(|p| p["in"] == "path" && p["name"] == *name)
                    .count();
                assert_eq!(n, 1, "{path} {verb}: path parameter {name}");
            }
        }
    }
}

#[test]
fn rest_mistakes_are_reported_at_their_line() {
    let yaml = "\
- rest:
    path: /a
    get:
      - path: /b
        bindingMode: xml
        to: direct:x
      - path: /c
- restConfiguration:
    component: servlet
";
    let errors = camel_core::yaml::load_str(yaml, "bad.yaml").unwrap_err();
    let text = errors.to_string();
    assert!(text.contains("bad.yaml:5:"), "{text}");
    assert!(text.contains("binding mode `xml`"), "{text}");
    assert!(text.contains("bad.yaml:7:"), "{text}");
    assert!(text.contains("needs `to`"), "{text}");
    assert!(text.contains("bad.yaml:9:"), "{text}");
    let unknown = camel_core::yaml::load_str("- rest:\n    pth: /a\n", "typo.yaml").unwrap_err();
    assert!(unknown.to_string().contains("path"), "{unknown}");
}
