//! `split` through the binary: a JSON array file cut by JSONPath into files, and a large
//! line file streamed in bounded memory.

mod support;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use support::spawn;

/// Runs `camel run routes --max-idle-seconds 1` until it ends; while it runs, `probe` is
/// called with the child's pid every 20 ms until it returns true. Returns the log.
fn run(routes: &Path, mut probe: impl FnMut(u32) -> bool) -> String {
    let (mut child, lines) = spawn(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "2"]);
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut probing = true;
    let status = loop {
        if probing && probe(child.id()) {
            probing = false;
        }
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let log: Vec<String> = lines.iter().collect();
    let log = log.join("\n");
    match status {
        Some(status) => assert!(status.success(), "{status:?}\n{log}"),
        None => panic!("the run did not end within 240 s\n{log}"),
    }
    log
}

#[test]
fn a_json_array_file_is_split_by_jsonpath_into_files() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(
        inbox.join("orders.json"),
        r#"[{"id": 7, "item": "tea"}, {"id": 8, "item": "milk"}, {"id": 9, "item": "sugar"}]"#,
    )
    .unwrap();
    let routes = root.path().join("routes.yaml");
    let yaml = format!(
        r#"- route:
    id: orders
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50}}
      steps:
        - split:
            jsonpath: "$[*]"
            aggregationStrategy: GroupedBodyAggregationStrategy
            steps:
              - to:
                  uri: 'file:{out}'
                  parameters:
                    file_name: "order-${{exchangeProperty.CamelSplitIndex}}-of-${{exchangeProperty.CamelSplitSize}}.json"
        - to:
            uri: 'file:{out}'
            parameters: {{file_name: all.json}}
"#,
        inbox = inbox.display(),
        out = root.path().join("out").display()
    );
    std::fs::write(&routes, yaml).unwrap();
    let log = run(&routes, |_| true);
    let out = root.path().join("out");
    let read = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{log}"));
        serde_json::from_str(&text).unwrap()
    };
    assert_eq!(
        read("order-0-of-3.json"),
        serde_json::json!({"id": 7, "item": "tea"})
    );
    assert_eq!(
        read("order-2-of-3.json"),
        serde_json::json!({"id": 9, "item": "sugar"})
    );
    assert_eq!(read("all.json")[1]["item"], "milk");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 4);
}

/// The peak resident set of process `pid` in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_large_line_file_is_streamed_in_bounded_memory() {
    const LINES: usize = 500_000;
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    std::fs::create_dir_all(&inbox).unwrap();
    // About 50 MB: 500,000 lines of 100 bytes.
    let mut file = std::io::BufWriter::new(std::fs::File::create(inbox.join("big.txt")).unwrap());
    for i in 0..LINES {
        writeln!(file, "{i:010} {}", "x".repeat(88)).unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let size = std::fs::metadata(inbox.join("big.txt")).unwrap().len();
    assert!(size >= 50_000_000, "{size}");
    let out = root.path().join("out");
    let routes = root.path().join("routes.yaml");
    let yaml = format!(
        r#"- route:
    id: big
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50, lazy_body: true, delete: true}}
      steps:
        - split:
            tokenize: "\n"
            streaming: true
            steps:
              - filter:
                  simple: "${{exchangeProperty.CamelSplitComplete}} == true"
                  steps:
                    - setBody: {{simple: "${{exchangeProperty.CamelSplitSize}} ${{body}}"}}
                    - to:
                        uri: 'file:{out}'
                        parameters: {{file_name: count.txt}}
"#,
        inbox = inbox.display(),
        out = out.display()
    );
    std::fs::write(&routes, yaml).unwrap();
    let mut peak = 0;
    let log = run(&routes, |pid| {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        out.join("count.txt").exists()
    });
    let count = std::fs::read_to_string(out.join("count.txt")).unwrap();
    assert_eq!(
        count,
        format!("{LINES} {:010} {}", LINES - 1, "x".repeat(88)),
        "{log}"
    );
    assert!(
        !inbox.join("big.txt").exists(),
        "the file is deleted after the route"
    );
    assert!(peak > 0, "VmHWM was read");
    // The debug binary alone holds about 47 MiB once started (41 MiB before the `xml`
    // feature's XPath/XSLT engine was linked in, more since MQTT, Redis, the cluster
    // and the console: a run peaked at 63 MiB); streaming the 50 MB file adds about
    // 7 MiB. Reading the file whole would hold the 50 MB body on top of the binary:
    // past 100 MiB.
    assert!(
        peak < 85 * 1024,
        "peak RSS {peak} KiB for a {size}-byte file\n{log}"
    );
    println!("peak RSS while streaming a {size}-byte file: {peak} KiB");
}
