//! `ftp:`, `ftps:` and `sftp:` consumers through the binary, against the servers `.ci/ftp-servers`
//! starts: a `camel run` consuming a remote folder (`delete=true`) is SIGKILLed
//! mid-folder and started again. Nothing is lost (every file reaches the output folder);
//! the files delivered twice (routed, but killed before the delete) are counted and
//! printed.

mod support;

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use camel_api::test_support::service_from_env;
use support::{spawn, unique_name, wait_until, KillOnDrop};

fn count_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// Fills a folder on the server with `files` files, runs `camel run` on a route from
/// `source` to a local folder, SIGKILLs it after a third arrived, starts it again, and
/// counts what arrived.
fn kill_and_restart(what: &str, root: &Path, source: impl Fn(&str) -> String) {
    const FILES: usize = 120;
    let folder = unique_name(what);
    let input = root.join(&folder);
    std::fs::create_dir_all(&input).unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o777)).unwrap();
    for i in 0..FILES {
        std::fs::write(input.join(format!("in-{i:04}.txt")), format!("file {i}")).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let routes = dir.path().join("ftp.yaml");
    // Each delivery writes `<source name>.<exchange id>`, so a duplicate shows as a
    // second file with the same source name.
    std::fs::write(
        &routes,
        format!(
            r#"- route:
    id: {what}-kill
    from:
      uri: '{uri}'
      steps:
        - delay: 15
        - setHeader: {{name: CamelFileName, simple: "${{header.CamelFileName}}.${{exchangeId}}"}}
        - to: 'file:{out}'
"#,
            uri = source(&folder),
            out = out.display()
        ),
    )
    .unwrap();
    let routes = routes.to_str().unwrap().to_string();
    let (within, every) = (Duration::from_secs(120), Duration::from_millis(50));
    let (child, _log) = spawn(&["run", &routes]);
    let mut child = KillOnDrop(child);
    wait_until("a third of the files", within, every, &|| {
        count_files(&out).len() >= FILES / 3
    });
    child.0.kill().expect("SIGKILL the consumer");
    let _ = child.0.wait();
    let before_restart = count_files(&out).len();
    let (again, log) = spawn(&["run", &routes]);
    let _again = KillOnDrop(again);
    wait_until("the input folder to empty", within, every, &|| {
        count_files(&input).is_empty()
    });
    let all = count_files(&out);
    let mut per_source: HashMap<String, usize> = HashMap::new();
    for name in &all {
        let source = name.split_once(".txt.").map(|(s, _)| s).unwrap_or(name);
        *per_source.entry(source.to_string()).or_default() += 1;
    }
    let duplicates = all.len() - per_source.len();
    println!(
        "{what} sigkill: files={FILES} unique={} duplicates={duplicates} delivered_before_kill={before_restart}",
        per_source.len()
    );
    let lines: Vec<String> = log.try_iter().collect();
    assert!(
        !lines.iter().any(|l| l.contains("camel-ftp-test")),
        "the password is never logged"
    );
    assert_eq!(per_source.len(), FILES, "every file delivered, none lost");
    // One file at a time: only the one routed when the process died comes twice.
    assert!(duplicates <= 1, "{duplicates} duplicates");
}

#[test]
fn a_sigkilled_sftp_consumer_restarts_and_loses_no_file() {
    let (Some(root), Some(url), Some(key), Some(known)) = (
        service_from_env("CAMEL_TEST_FTP_ROOT"),
        service_from_env("CAMEL_TEST_SFTP_URL"),
        service_from_env("CAMEL_TEST_SFTP_KEY"),
        service_from_env("CAMEL_TEST_SFTP_KNOWN_HOSTS"),
    ) else {
        return;
    };
    kill_and_restart("sftp", Path::new(&root), |folder| {
        format!("{url}/{folder}?privateKeyFile={key}&knownHostsFile={known}&delete=true&initialDelay=0&delay=50")
    });
}

#[test]
fn a_sigkilled_ftp_consumer_restarts_and_loses_no_file() {
    let (Some(root), Some(url)) = (
        service_from_env("CAMEL_TEST_FTP_ROOT"),
        service_from_env("CAMEL_TEST_FTP_URL"),
    ) else {
        return;
    };
    kill_and_restart("ftp", Path::new(&root), |folder| {
        format!("{url}/{folder}?delete=true&initialDelay=0&delay=50")
    });
}

#[test]
fn a_sigkilled_ftps_consumer_restarts_and_loses_no_file() {
    let (Some(root), Some(url), Some(ca)) = (
        service_from_env("CAMEL_TEST_FTP_ROOT"),
        service_from_env("CAMEL_TEST_FTPS_URL"),
        service_from_env("CAMEL_TEST_FTPS_CA"),
    ) else {
        return;
    };
    kill_and_restart("ftps", Path::new(&root), |folder| {
        format!("{url}/{folder}?trustStoreFile={ca}&delete=true&initialDelay=0&delay=50")
    });
}
