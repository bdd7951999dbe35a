//! Cron routes through the binary, written as a Camel user writes them.

mod support;

use support::{camel, stderr};

fn routes(dir: &std::path::Path, uri: &str) -> String {
    let path = dir.join("routes.yaml");
    let yaml = format!(
        "- route:\n    id: ticker\n    from:\n      uri: '{uri}'\n      steps:\n        - log: 'cron ${{header.triggerName}} fired at ${{header.scheduledFireTime}}'\n"
    );
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

#[test]
fn a_cron_route_fires_every_second_until_max_messages() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path(), "cron:tick?schedule=*/1+*+*+*+*+?");
    let out = camel(&["run", &file, "--max-messages", "2"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let fired: Vec<i64> = log
        .lines()
        .filter_map(|l| l.split("cron tick fired at ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(fired.len() >= 2, "expected 2 firings:\n{log}");
    // Whole seconds, one second apart.
    assert_eq!(fired[0] % 1000, 0, "{log}");
    assert_eq!(fired[1] - fired[0], 1000, "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
}

#[test]
fn an_invalid_cron_expression_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    // Four fields: Camel's cron endpoint takes five to seven.
    let file = routes(dir.path(), "cron:tick?schedule=0+0+12+*");
    let out = camel(&["run", &file, "--max-messages", "1"]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("`schedule`"), "{log}");
    assert!(log.contains("6 or 7 fields"), "{log}");
    // Located: the file, line and column of the `from`, and the route.
    assert!(log.contains("routes.yaml:4:"), "{log}");
    assert!(log.contains("route `ticker`"), "{log}");
}
