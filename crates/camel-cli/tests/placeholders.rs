//! Through the binary: property placeholders take their values from
//! `application.properties` beside the route file, `--properties FILE` and `--property`
//! (later wins), and a missing one is a located error naming the key.

mod support;

use std::path::Path;

const ROUTES: &str = "- from:
    uri: \"timer:{{timer.name:tick}}\"
    parameters: {repeatCount: 1, delay: 0}
    steps:
      - log: \"greeting={{greeting}} where={{where}} last={{last}} env={{env:CAMEL_PLACEHOLDER_UNSET:none}}\"
";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn sources_resolve_with_the_later_one_winning() {
    let dir = tempfile::tempdir().unwrap();
    let routes = write(dir.path(), "routes.yaml", ROUTES);
    write(
        dir.path(),
        "application.properties",
        "# beside the route file\ngreeting = app\nwhere = beside\nlast = app\n",
    );
    let extra = write(dir.path(), "extra.properties", "last=file\ngreeting=file\n");
    let yaml = write(dir.path(), "more.yaml", "last: yaml-file\n");
    let out = support::camel(&[
        "run",
        &routes,
        "--properties",
        &extra,
        "--properties",
        &yaml,
        "--property",
        "greeting=cli",
        "--max-messages",
        "1",
    ]);
    let log = support::text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.contains("greeting=cli where=beside last=yaml-file env=none"),
        "{log}"
    );
    // `camel validate` reads the same sources.
    let out = support::camel(&["validate", &routes, "--prop", "greeting=x"]);
    assert_eq!(out.status.code(), Some(0), "{}", support::text(&out));
}

#[test]
fn a_missing_key_fails_with_its_place_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let routes = write(dir.path(), "routes.yaml", ROUTES);
    for command in ["run", "validate"] {
        let out = support::camel(&[
            command,
            &routes,
            "--property",
            "greeting=hi",
            "--property",
            "db.password=hunter2",
            "--property",
            "where=x",
        ]);
        let log = support::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command}: {log}");
        assert!(
            log.contains(&format!(
                "error: {routes}:5:9: property placeholder `{{{{last}}}}`"
            )),
            "{command}: {log}"
        );
        assert!(log.contains("no property `last`"), "{command}: {log}");
        assert!(!log.contains("hunter2"), "{command}: {log}");
    }
    // A properties file that does not exist is named.
    let out = support::camel(&[
        "validate",
        &routes,
        "--properties",
        "/nonexistent/x.properties",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(support::stderr(&out).contains("/nonexistent/x.properties"));
}

#[test]
fn a_malformed_property_flag_is_refused_without_echoing_it() {
    let out = support::camel(&["validate", "routes.yaml", "--property", "s3cr3t-no-key"]);
    let log = support::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("--property number 1 is not KEY=VALUE"),
        "{log}"
    );
    assert!(!log.contains("s3cr3t"), "{log}");
}

#[test]
fn a_watch_reload_reads_the_properties_again() {
    let dir = tempfile::tempdir().unwrap();
    let route = "- route:\n    id: ticker\n    from:\n      uri: timer:t\n      parameters: {period: 50, delay: 0}\n      steps:\n        - log: 'says {{word}}'\n";
    let routes = write(dir.path(), "routes.yaml", route);
    write(dir.path(), "application.properties", "word=one\n");
    let (mut child, lines) = support::spawn(&["run", &routes, "--watch", "--max-seconds", "60"]);
    support::wait_line(&lines, "says one");
    // The new value counts once the route file changes (the watcher polls route files).
    write(dir.path(), "application.properties", "word=two\n");
    write(dir.path(), "routes.yaml", &format!("# edited\n{route}"));
    support::wait_line(&lines, "routes reloaded");
    support::wait_line(&lines, "says two");
    // A key the edit drops leaves the running route as it was, with a located error.
    write(dir.path(), "application.properties", "other=x\n");
    write(dir.path(), "routes.yaml", route);
    let error = support::wait_line(&lines, "no property `word`");
    assert!(error.contains("routes.yaml:7:11: "), "{error}");
    support::wait_line(&lines, "running routes are unchanged");
    support::wait_line(&lines, "says two");
    child.kill().unwrap();
    child.wait().unwrap();
}
