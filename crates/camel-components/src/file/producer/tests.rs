use std::path::Path;

use camel_api::{names, BoxProcessor, CamelError, Exchange};

use super::super::{headers, FileComponent};
use crate::testing::endpoint;

fn producer(dir: &Path, options: &str) -> BoxProcessor {
    let uri = format!("file:{}?{options}", dir.display());
    endpoint(&FileComponent, &uri).unwrap().producer().unwrap()
}

async fn put(to: &BoxProcessor, name: &str, body: &str) -> Result<Exchange, CamelError> {
    to.process(Exchange::new(body).with_header(names::FILE_NAME, name))
        .await
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// Every entry of `dir`, so a test can see that no temporary file was left behind.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn writes_the_body_under_the_file_name_header_creating_folders() {
    let dir = tempfile::tempdir().unwrap();
    let to = producer(dir.path(), "");
    let out = put(&to, "a/b/c.txt", "hello").await.unwrap();
    assert_eq!(read(dir.path(), "a/b/c.txt"), "hello");
    let produced = out.header(headers::FILE_NAME_PRODUCED).unwrap().to_string();
    assert!(produced.ends_with("a/b/c.txt"), "{produced}");
    assert_eq!(entries(&dir.path().join("a/b")), ["c.txt"]);
}

#[tokio::test]
async fn without_a_name_the_exchange_id_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let ex = Exchange::new("body");
    let id = ex.id.to_string();
    producer(dir.path(), "").process(ex).await.unwrap();
    assert_eq!(read(dir.path(), &id), "body");
}

#[tokio::test]
async fn names_cannot_leave_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner");
    let to = producer(&inner, "");
    for name in ["../escape.txt", "/tmp/escape.txt", "x/../../escape.txt", ""] {
        let err = put(&to, name, "x").await.unwrap_err();
        assert!(matches!(err, CamelError::External { .. }), "{name}: {err}");
    }
    assert!(!dir.path().join("escape.txt").exists());
}

#[tokio::test]
async fn override_replaces_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let to = producer(dir.path(), "fileExist=Override");
    put(&to, "f", "old contents").await.unwrap();
    put(&to, "f", "new").await.unwrap();
    assert_eq!(read(dir.path(), "f"), "new");
    assert_eq!(entries(dir.path()), ["f"]);
}

#[tokio::test]
async fn append_adds_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let to = producer(dir.path(), "file_exist=Append");
    put(&to, "log", "a").await.unwrap();
    put(&to, "log", "b").await.unwrap();
    assert_eq!(read(dir.path(), "log"), "ab");
}

#[tokio::test]
async fn fail_refuses_an_existing_file_and_ignore_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let fail = producer(dir.path(), "fileExist=Fail");
    put(&fail, "f", "first").await.unwrap();
    let err = put(&fail, "f", "second").await.unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");

    let ignore = producer(dir.path(), "fileExist=Ignore");
    put(&ignore, "f", "third").await.unwrap();
    put(&ignore, "g", "fresh").await.unwrap();
    assert_eq!(read(dir.path(), "f"), "first");
    assert_eq!(read(dir.path(), "g"), "fresh");
    assert!(endpoint(&FileComponent, "file:/tmp/x?fileExist=Merge").is_err());
}

// Last: the only test that needs camel-language's `simple`.
#[tokio::test]
async fn file_name_expression_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let to = producer(dir.path(), "fileName=out/${header.id}.txt");
    to.process(Exchange::new("x").with_header("id", "42"))
        .await
        .unwrap();
    assert_eq!(read(dir.path(), "out/42.txt"), "x");

    let escape = producer(dir.path(), "fileName=../${header.id}");
    let err = escape
        .process(Exchange::new("x").with_header("id", "1"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("must stay inside"), "{err}");
}

#[tokio::test]
async fn without_auto_create_a_missing_folder_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let to = producer(&missing, "auto_create=false");
    let err = put(&to, "a.txt", "x").await.unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    assert!(!missing.exists(), "the folder was not created");
}

/// `out/` (the endpoint folder) beside `outside/`.
fn out_and_outside() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (root, out, outside)
}

#[tokio::test]
async fn a_link_in_the_name_cannot_carry_a_write_outside() {
    let (_root, out, outside) = out_and_outside();
    std::os::unix::fs::symlink("../outside", out.join("link")).unwrap();
    let to = producer(&out, "");
    for name in ["link/x.txt", "link/new/x.txt", "./link/x.txt"] {
        let err = put(&to, name, "x").await.unwrap_err().to_string();
        assert!(err.contains("outside the endpoint folder"), "{name}: {err}");
    }
    assert!(entries(&outside).is_empty(), "{:?}", entries(&outside));
}

#[tokio::test]
async fn a_link_to_a_folder_inside_is_followed() {
    let (_root, out, _outside) = out_and_outside();
    std::fs::create_dir_all(out.join("real")).unwrap();
    std::os::unix::fs::symlink("real", out.join("alias")).unwrap();
    let to = producer(&out, "");
    put(&to, "alias/sub/x.txt", "x").await.unwrap();
    assert_eq!(read(&out, "real/sub/x.txt"), "x");
}

#[tokio::test]
async fn append_refuses_a_linked_file_and_override_replaces_the_link_itself() {
    let (_root, out, outside) = out_and_outside();
    std::fs::write(outside.join("target.txt"), "kept").unwrap();
    std::os::unix::fs::symlink("../outside/target.txt", out.join("log")).unwrap();
    let err = put(&producer(&out, "fileExist=Append"), "log", "more")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(read(&outside, "target.txt"), "kept");

    put(&producer(&out, "fileExist=Override"), "log", "new")
        .await
        .unwrap();
    assert_eq!(read(&outside, "target.txt"), "kept");
    assert!(!out.join("log").is_symlink());
    assert_eq!(read(&out, "log"), "new");
}

#[tokio::test]
async fn a_name_at_the_255_byte_limit_works_with_override() {
    let dir = tempfile::tempdir().unwrap();
    let name = "n".repeat(255);
    let to = producer(dir.path(), "fileExist=Override");
    put(&to, &name, "first").await.unwrap();
    put(&to, &format!("sub/{name}"), "deep").await.unwrap();
    put(&to, &name, "second").await.unwrap();
    assert_eq!(read(dir.path(), &name), "second");
    assert_eq!(entries(dir.path()), [name, "sub".to_string()]);
}
