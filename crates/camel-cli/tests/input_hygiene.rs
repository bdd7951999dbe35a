//! Through the binary: route ids that could forge log lines are refused (issue 10, item
//! 9), and what used to pass silently or print lines without a place is one located error
//! each (items 12 and 13), from `camel validate` and from an admin PUT.

mod support;

use support::admin_api::{admin_client, send, Camel};

/// Each file with the line and column its one error must name, and a word of its message.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "newline_id.yaml",
        "- route:\n    id: \"ok\\nINFO forged line\"\n    from: {uri: direct:a}\n",
        "2:5",
        "U+000A",
    ),
    (
        "bidi_id.yaml",
        "- route:\n    id: \"abc\\u202Edef\"\n    from: {uri: direct:a}\n",
        "2:5",
        "U+202E",
    ),
    (
        "regex.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - filter:\n          simple: \"${body} regex 'a(b'\"\n          steps: [stop]\n",
        "5:11",
        "unclosed group",
    ),
    (
        "simpl.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - set_header: {name: ver, simpl: \"x\"}\n",
        "4:33",
        "did you mean `simple`",
    ),
    (
        "nul.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - log: hi\0there\n",
        "4:16",
        "U+0000",
    ),
    (
        "method.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - set_body: {simple: \"${header.foo.frobnicate()}\"}\n",
        "4:20",
        "unsupported method `frobnicate`",
    ),
    (
        "placeholder.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - to: \"file:{{folderName}}\"\n",
        "4:9",
        "no property `folderName`",
    ),
];

#[test]
fn validate_gives_each_one_located_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, place, word) in CASES {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = support::camel(&["validate", path.to_str().unwrap()]);
        let log = support::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {log}");
        let lines: Vec<&str> = log.lines().collect();
        // One error with its place, then the count: nothing forged, nothing loose.
        assert_eq!(lines.len(), 2, "{name}: {log}");
        let located = format!("error: {}:{place}: ", path.display());
        assert!(lines[0].starts_with(&located), "{name}: {log}");
        assert!(lines[0].contains(word), "{name}: {log}");
        assert_eq!(lines[1], "1 error(s)", "{name}: {log}");
    }
}

#[tokio::test]
async fn admin_put_refuses_a_forging_route_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        "- route:\n    id: calm\n    from: {uri: direct:calm}\n",
    )
    .unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let http = admin_client();
    // A forging id in the path is refused before it is shown anywhere.
    let body = "- route:\n    id: \"x\\nINFO forged\"\n    from: {uri: direct:x}\n";
    let (code, r) = send(
        http.put(format!("{base}/routes/x%0AINFO%20forged"))
            .body(body),
    )
    .await;
    assert_eq!(code, 400, "{r}");
    let error = r["errors"][0].as_str().unwrap_or_default();
    assert!(error.contains("U+000A") && !error.contains('\n'), "{r}");
    // In the body, it is refused where it is written.
    let (code, r) = send(http.put(format!("{base}/routes/x")).body(body)).await;
    assert_eq!(code, 400, "{r}");
    let error = r["errors"][0].as_str().unwrap_or_default();
    assert!(error.starts_with("PUT /routes/x:2:5: "), "{r}");
    assert!(error.contains("U+000A") && !error.contains('\n'), "{r}");
    let (code, long) = send(
        http.put(format!("{base}/routes/{}", "r".repeat(300)))
            .body(format!(
                "- route:\n    id: {}\n    from: {{uri: direct:y}}\n",
                "r".repeat(300)
            )),
    )
    .await;
    assert_eq!(code, 400, "{long}");
    assert!(long.to_string().contains("at most 256 bytes"), "{long}");
    let (_, list) = send(http.get(format!("{base}/routes"))).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert!(
        camel.log().iter().all(|l| !l.starts_with("INFO forged")),
        "{:?}",
        camel.log()
    );
}
