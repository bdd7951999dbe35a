//! The web console's server side on the real binary: its assets and headers, its reads
//! behind the token, and the editor's validation as a change (token, Origin and body type
//! checked like any other). The admin API's own checks (foreign Host, cross-origin
//! `text/plain` PUT, no token, a public bind without a token) are in admin_security.rs;
//! the page itself is driven in a real browser by tests/browser/console.test.mjs.

mod support;

use std::time::Duration;

use support::admin_api::{admin_client, send, Camel, TOKEN};

const ROUTE: &str = "- route:\n    id: ticks\n    from: {uri: 'timer:ticks', parameters: {period: 3600000, delay: 3600000}}\n    steps:\n      - set_header: {name: x, constant: 1}\n      - log: tick\n";

fn routes_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTE).unwrap();
    file
}

fn plain() -> reqwest::Client {
    reqwest::Client::new()
}

fn assert_browser_headers(resp: &reqwest::Response, what: &str) {
    let h = resp.headers();
    let csp = h
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        csp.contains("script-src 'self'")
            && csp.contains("style-src 'self'")
            && csp.contains("frame-ancestors 'none'")
            && !csp.contains("unsafe-inline"),
        "{what}: CSP {csp:?}"
    );
    assert_eq!(h.get("x-frame-options").unwrap(), "DENY", "{what}");
    assert_eq!(
        h.get("x-content-type-options").unwrap(),
        "nosniff",
        "{what}"
    );
}

#[tokio::test]
async fn the_assets_load_without_the_token_and_hold_nothing_inline() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let base = camel.base_url().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/console", "text/html"),
        ("/console/app.js", "text/javascript"),
        ("/console/app.css", "text/css"),
        ("/console/ops.js", "text/javascript"),
    ] {
        let resp = plain().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_browser_headers(&resp, path);
        let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(ct.starts_with(kind), "{path}: {ct}");
        let body = resp.text().await.unwrap();
        if kind == "text/html" {
            // Every script has a src, no style element or attribute, no handler attribute.
            assert_eq!(body.matches("<script").count(), 2, "{body}");
            assert!(body.contains("<script src=\"/console/app.js\""), "{body}");
            assert!(body.contains("<script src=\"/console/ops.js\""), "{body}");
            assert!(
                !body.contains("<style") && !body.contains("style="),
                "{body}"
            );
            assert!(
                !body.contains(" onclick=") && !body.contains(" onload="),
                "{body}"
            );
            assert!(
                !body.contains("http://") && !body.contains("https://"),
                "no CDN: {body}"
            );
        }
    }
}

#[tokio::test]
async fn the_console_reads_need_the_token_and_refusals_carry_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let base = camel.base_url().await;
    for path in [
        "/console/api/routes",
        "/console/api/events",
        "/console/api/routes/ticks/yaml",
        "/console/api/routes/ticks/diagram.svg",
    ] {
        let resp = plain().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{path} without the token");
        assert_browser_headers(&resp, path);
        let wrong = plain()
            .get(format!("{base}{path}"))
            .bearer_auth("not-the-admin-token-at-all")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{path} with a wrong token");
    }
    let (code, rows) = send(admin_client().get(format!("{base}/console/api/routes"))).await;
    assert_eq!(code, 200);
    assert_eq!(rows[0]["id"], "ticks");
    assert_eq!(rows[0]["status"], "Started");
    let svg = admin_client()
        .get(format!("{base}/console/api/routes/ticks/diagram.svg"))
        .send()
        .await
        .unwrap();
    assert_eq!(svg.status(), 200);
    let svg = svg.text().await.unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("data-step=\"steps[1].log\""),
        "{svg}"
    );
    assert!(!svg.contains("<script") && !svg.contains("style="), "{svg}");
    for (file, start) in [("diagram.mmd", "flowchart TD"), ("diagram.dot", "digraph")] {
        let text = admin_client()
            .get(format!("{base}/console/api/routes/ticks/{file}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.starts_with(start), "{file}: {text}");
    }
    let (code, _) =
        send(admin_client().get(format!("{base}/console/api/routes/ticks/diagram.png"))).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn the_live_stream_sends_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let base = camel.base_url().await;
    let mut resp = admin_client()
        .get(format!("{base}/console/api/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let chunk = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
        .await
        .expect("an event within the period")
        .unwrap()
        .expect("a chunk");
    let text = String::from_utf8_lossy(&chunk);
    assert!(text.starts_with("event: routes\ndata: ["), "{text}");
    let data: serde_json::Value =
        serde_json::from_str(text.trim_start_matches("event: routes\ndata: ").trim()).unwrap();
    assert_eq!(data[0]["id"], "ticks");
}

#[tokio::test]
async fn validation_is_a_change_checked_like_the_others_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let base = camel.base_url().await;
    let url = format!("{base}/console/api/routes/ticks/validate");
    let bad = ROUTE.replace("- log: tick", "- lgo: tick");
    // No token; a form-free cross-origin body type; another origin.
    let resp = plain()
        .post(&url)
        .header("content-type", "application/yaml")
        .body(bad.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = plain()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body(bad.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);
    let resp = admin_client()
        .post(&url)
        .header("origin", "http://evil.example")
        .body(bad.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    // With the token: the error at its line and column, not prefixed with them.
    let (code, v) = send(admin_client().post(&url).body(bad)).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["errors"][0]["line"], 6, "{v}");
    assert_eq!(v["errors"][0]["column"], 9, "{v}");
    let message = v["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("route `ticks`: at steps[1].lgo: unknown key `lgo`"),
        "{v}"
    );
    // A bad YAML syntax is placed too.
    let (_, v) = send(admin_client().post(&url).body("- route:\n    id: [ticks\n")).await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(v["errors"][0]["line"].as_u64().is_some(), "{v}");
    // Another id than the route's is refused.
    let other = ROUTE.replace("id: ticks", "id: other");
    let (_, v) = send(admin_client().post(&url).body(other)).await;
    assert_eq!(v["ok"], false, "{v}");
    // The running route is untouched.
    let (_, route) = send(admin_client().get(format!("{base}/routes/ticks"))).await;
    assert_eq!(route["status"], "Started");
    assert_eq!(route["definition"]["steps"][1]["log"], "tick", "{route}");
}

#[tokio::test]
async fn the_running_definition_reads_back_as_a_valid_route_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let base = camel.base_url().await;
    let yaml = admin_client()
        .get(format!("{base}/console/api/routes/ticks/yaml"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        yaml.starts_with("- route:\n    id: ticks\n    from:\n      uri: "),
        "{yaml}"
    );
    let url = format!("{base}/console/api/routes/ticks/validate");
    let (code, v) = send(admin_client().post(&url).body(yaml.clone())).await;
    assert_eq!(
        (code, &v["ok"]),
        (200, &serde_json::json!(true)),
        "{v}\n{yaml}"
    );
    // And it swaps in as it is (the editor's Apply is this PUT).
    let (code, v) = send(
        admin_client()
            .put(format!("{base}/routes/ticks"))
            .body(yaml),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["swapped"], true);
}
