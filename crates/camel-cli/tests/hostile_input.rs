//! Through the binary: message data that used to take control (issue 24, items 1, 5 and
//! 6). A deeply nested body fails its own exchange instead of overflowing the stack and
//! aborting the process; a value spliced into a `toD` URI cannot add a segment, climb
//! out of the folder, or be evaluated as an expression; placeholders cannot multiply
//! without bound; and a newline in logged data cannot forge a log line.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{camel, file_names, text};

/// Runs a route that reads the files of `dir/in` and applies `steps` (YAML list items,
/// one per line, `DIR` standing for `dir`), after writing `files` there as (name,
/// content); it ends after one exchange per file. Gives the run and its log.
fn run_on_files(
    dir: &Path,
    steps: &str,
    files: &[(&str, &str)],
    env: &[(&str, &str)],
) -> (Output, String) {
    let dir_text = dir.display().to_string();
    let steps: String = steps
        .lines()
        .map(|l| format!("        {}\n", l.replace("DIR", &dir_text)))
        .collect();
    let routes = dir.join("routes.yaml");
    let yaml = format!(
        "- route:\n    id: hostile\n    from:\n      uri: 'file:{dir_text}/in'\n      \
         parameters: {{initial_delay: 0, delay: 20}}\n      steps:\n{steps}"
    );
    std::fs::write(&routes, yaml).unwrap();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    for (name, content) in files {
        std::fs::write(dir.join("in").join(name), content).unwrap();
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
    cmd.args(["run", routes.to_str().unwrap(), "--max-messages"])
        .arg(files.len().to_string())
        .env("RUST_LOG", "info")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the camel binary runs");
    let log = text(&out);
    (out, log)
}

#[test]
fn a_body_nested_3000_deep_fails_its_exchange_and_the_process_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    // 6 KB of brackets: jaq's reader used to recurse once per level and abort (134).
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    let (out, log) = run_on_files(
        dir,
        "- setBody: {jq: '.'}\n- to: 'file:DIR/out'",
        &[("a-deep.json", &deep), ("b-ok.json", r#"{"ok": true}"#)],
        &[],
    );
    assert!(out.status.code().is_some(), "killed by a signal: {log}");
    assert!(log.contains("deeper than 128"), "{log}");
    assert_eq!(file_names(&dir.join("out")), ["b-ok.json"], "{log}");
}

#[test]
fn xml_nested_100000_deep_fails_its_exchange_and_the_process_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let deep = format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
    let (out, log) = run_on_files(
        dir,
        "- unmarshal: {jacksonXml: {}}\n- marshal: {json: {}}\n- to: 'file:DIR/out'",
        &[("a-deep.xml", &deep), ("b-ok.xml", "<r><ok>1</ok></r>")],
        &[],
    );
    assert!(out.status.code().is_some(), "killed by a signal: {log}");
    assert!(log.contains("deeper than 128"), "{log}");
    assert_eq!(file_names(&dir.join("out")), ["b-ok.xml"], "{log}");
}

/// The header `v` set from the body, then this `toD` step.
fn to_d_of_body(to_d: &str) -> String {
    format!("- setHeader: {{name: v, simple: '${{body}}'}}\n- toD: {to_d}")
}

#[test]
fn to_d_values_cannot_leave_the_folder_or_be_evaluated() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    // The docs' own example: the region comes from the message.
    let (out, log) = run_on_files(
        dir,
        &to_d_of_body("'file:DIR/out/${header.v}?fileName=${header.v}.txt'"),
        &[
            ("1", "../escaped"),
            ("2", "${env.CAMEL_HOSTILE_SECRET}"),
            ("3", "eu?fileExist=append&autoCreate=false"),
        ],
        &[("CAMEL_HOSTILE_SECRET", "s3cr3t")],
    );
    assert!(out.status.code().is_some(), "{log}");
    assert!(!dir.join("escaped").exists(), "climbed out of out/: {log}");
    assert!(
        !dir.join("escaped.txt").exists(),
        "climbed out of out/: {log}"
    );
    // In the query the value is the option's text again: a file name with `..`, which
    // the file producer refuses (that exchange fails; the file stays in `in/`).
    assert!(
        log.contains("must stay inside the endpoint folder"),
        "{log}"
    );
    let folders = {
        let mut v: Vec<String> = std::fs::read_dir(dir.join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        folders,
        [
            "%24%7Benv.CAMEL_HOSTILE_SECRET%7D",
            "eu%3FfileExist%3Dappend%26autoCreate%3Dfalse"
        ],
        "{log}"
    );
    // The options a value held did not become options: one file, named by the text.
    assert_eq!(
        file_names(&dir.join("out/eu%3FfileExist%3Dappend%26autoCreate%3Dfalse")),
        ["eu?fileExist=append&autoCreate=false.txt"]
    );
    // The file name is the value's text; the secret was never looked up.
    assert_eq!(
        file_names(&dir.join("out/%24%7Benv.CAMEL_HOSTILE_SECRET%7D")),
        ["${env.CAMEL_HOSTILE_SECRET}.txt"]
    );
    assert!(!log.contains("s3cr3t"), "{log}");
}

#[test]
fn to_d_raw_values_is_the_explicit_way_back_to_splicing() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let (out, log) = run_on_files(
        dir,
        &to_d_of_body("{uri: 'file:DIR/out/${header.v}', rawValues: true}"),
        &[("1", "a/b")],
        &[],
    );
    assert!(out.status.success(), "{log}");
    assert_eq!(file_names(&dir.join("out/a/b")), ["1"], "{log}");
}

#[test]
fn placeholders_that_multiply_are_an_error_not_a_gigabyte() {
    let root = tempfile::tempdir().unwrap();
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        "- from:\n    uri: direct:a\n    steps:\n      - log: '{{p9}}'\n",
    )
    .unwrap();
    let mut args = vec![
        "validate".to_string(),
        routes.to_str().unwrap().to_string(),
        "--property".into(),
        format!("p0={}", "x".repeat(100)),
    ];
    for level in 1..=9 {
        args.push("--property".into());
        args.push(format!(
            "p{level}={}",
            format!("{{{{p{}}}}}", level - 1).repeat(10)
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = camel(&args);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("expand to more than 1048576 bytes"), "{log}");
}

#[test]
fn a_newline_in_logged_data_cannot_forge_a_log_line() {
    let root = tempfile::tempdir().unwrap();
    let (out, log) = run_on_files(
        root.path(),
        "- log: 'got ${body}'",
        &[("1", "x\nERROR forged line\r\nWARN another")],
        &[],
    );
    assert!(out.status.success(), "{log}");
    assert!(
        log.lines()
            .all(|l| !l.starts_with("ERROR forged") && !l.starts_with("WARN another")),
        "{log}"
    );
    assert!(
        log.contains(r"got x\nERROR forged line\r\nWARN another"),
        "{log}"
    );
}

#[test]
fn to_d_refuses_a_value_that_is_a_dot_segment_and_splicing_into_sql() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    // `%2E%2E` would still be `..` to an HTTP client's URL parser: the exchange fails.
    let (out, log) = run_on_files(
        dir,
        &to_d_of_body("'file:DIR/out/${header.v}'"),
        &[("1", ".."), ("2", "ok")],
        &[],
    );
    assert!(out.status.code().is_some(), "{log}");
    assert!(log.contains("path step of its own"), "{log}");
    assert_eq!(file_names(&dir.join("out/ok")), ["2"], "{log}");
    assert_eq!(file_names(dir), ["routes.yaml"], "{log}");

    // No encoding makes a value safe inside a SQL statement (`id`, `x--`): refused at load.
    let sql = dir.join("sql.yaml");
    std::fs::write(
        &sql,
        "- from:\n    uri: direct:a\n    steps:\n      - toD: \"sql:delete from t where id = ${header.id}\"\n",
    )
    .unwrap();
    let out = camel(&["validate", sql.to_str().unwrap()]);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("splices a value into the SQL statement"),
        "{log}"
    );
    assert!(log.contains("sql.yaml:4"), "{log}");
}

#[test]
fn placeholders_repeated_over_many_values_stop_at_the_total_budget() {
    // Each value resolves to 960 KB, under the 1 MiB of one resolution; 2,000 of them
    // would be 1.9 GB (the process used to take 3.7 GB and abort).
    let root = tempfile::tempdir().unwrap();
    let properties = root.path().join("p.properties");
    std::fs::write(
        &properties,
        format!(
            "p0={}\np1={}\np2={}\n",
            "x".repeat(1000),
            "{{p0}}".repeat(32),
            "{{p1}}".repeat(30)
        ),
    )
    .unwrap();
    let mut yaml = String::from("- from:\n    uri: 'timer:t?repeatCount=1'\n    steps:\n");
    for i in 0..2000 {
        yaml.push_str(&format!("      - log: 'm{i} {{{{p2}}}}'\n"));
    }
    let routes = root.path().join("routes.yaml");
    std::fs::write(&routes, yaml).unwrap();
    let started = std::time::Instant::now();
    let out = camel(&[
        "validate",
        routes.to_str().unwrap(),
        "--properties",
        properties.to_str().unwrap(),
    ]);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    // 64 MiB hold 69 values of about 960 KB: the 70th (line 73) passes the budget, and it
    // is the only error.
    assert!(
        log.contains("routes.yaml:73:9: property placeholders expand to more than 64 MiB in total"),
        "{log}"
    );
    assert_eq!(log.matches("in total").count(), 1, "{log}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
