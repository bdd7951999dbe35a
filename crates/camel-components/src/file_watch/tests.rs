use std::path::Path;
use std::time::Duration;

use camel_api::{BoxProcessor, ConsumerContext};

use super::consumer::Watcher;
use super::*;
use crate::testing::endpoint;

fn watch(dir: &Path, query: &str) -> Watch {
    let uri = format!("file-watch:{}?{query}", dir.display());
    Watch::parse(EndpointUri::parse(&uri).unwrap()).unwrap()
}

async fn watcher(dir: &Path, query: &str) -> Watcher {
    Watcher::start("file-watch:test".into(), watch(dir, query))
        .await
        .unwrap()
}

fn ev(kind: FileEvent, name: &str) -> (FileEvent, String) {
    (kind, name.to_string())
}

#[tokio::test]
async fn what_was_there_raises_nothing_then_changes_are_events() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.txt"), "1").unwrap();
    let mut w = watcher(dir.path(), "").await;
    assert!(w.changes().await.unwrap().is_empty());

    std::fs::write(dir.path().join("new.txt"), "1").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/deep.csv"), "1").unwrap();
    assert_eq!(
        w.changes().await.unwrap(),
        [
            ev(FileEvent::Create, "new.txt"),
            ev(FileEvent::Create, "sub"),
            ev(FileEvent::Create, "sub/deep.csv"),
        ]
    );
    std::fs::write(dir.path().join("old.txt"), "longer").unwrap();
    std::fs::remove_file(dir.path().join("new.txt")).unwrap();
    assert_eq!(
        w.changes().await.unwrap(),
        [
            ev(FileEvent::Delete, "new.txt"),
            ev(FileEvent::Modify, "old.txt")
        ]
    );
}

#[tokio::test]
async fn events_ant_include_and_recursive_filter() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("in")).unwrap();
    let mut w = watcher(dir.path(), "events=CREATE,DELETE&antInclude=**/*.csv").await;
    let mut flat = watcher(dir.path(), "recursive=false").await;
    std::fs::write(dir.path().join("a.csv"), "1").unwrap();
    std::fs::write(dir.path().join("a.txt"), "1").unwrap();
    std::fs::write(dir.path().join("in/b.csv"), "1").unwrap();
    assert_eq!(
        w.changes().await.unwrap(),
        [
            ev(FileEvent::Create, "a.csv"),
            ev(FileEvent::Create, "in/b.csv")
        ]
    );
    assert_eq!(
        flat.changes().await.unwrap(),
        [
            ev(FileEvent::Create, "a.csv"),
            ev(FileEvent::Create, "a.txt")
        ]
    );
    std::fs::write(dir.path().join("a.csv"), "changed").unwrap();
    std::fs::remove_file(dir.path().join("in/b.csv")).unwrap();
    // MODIFY is not asked for.
    assert_eq!(
        w.changes().await.unwrap(),
        [ev(FileEvent::Delete, "in/b.csv")]
    );
}

#[tokio::test]
async fn queue_size_cuts_one_look() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = watcher(dir.path(), "queueSize=2").await;
    for name in ["a", "b", "c"] {
        std::fs::write(dir.path().join(name), "1").unwrap();
    }
    assert_eq!(
        w.changes().await.unwrap(),
        [ev(FileEvent::Create, "a"), ev(FileEvent::Create, "b")]
    );
}

#[tokio::test]
async fn headers_as_camel_sets_them() {
    let dir = tempfile::tempdir().unwrap();
    let w = watcher(dir.path(), "").await;
    let ex = w.exchange(FileEvent::Modify, "sub/a.txt");
    let header = |name: &str| ex.header(name).map(|v| v.to_string()).unwrap_or_default();
    let base = std::path::absolute(dir.path()).unwrap();
    let absolute = base.join("sub/a.txt").display().to_string();
    assert_eq!(header(FILE_EVENT_TYPE), "MODIFY");
    assert_eq!(header("CamelFileName"), "sub/a.txt");
    assert_eq!(header("CamelFileRelativePath"), "sub/a.txt");
    assert_eq!(header("CamelFileNameOnly"), "a.txt");
    assert_eq!(header("CamelFileAbsolute"), "true");
    assert_eq!(header("CamelFileAbsolutePath"), absolute);
    assert_eq!(
        header("CamelFileParent"),
        base.join("sub").display().to_string()
    );
    assert!(
        ex.header("CamelFileLastModified")
            .and_then(|v| v.as_i64())
            .unwrap()
            > 0
    );
    assert_eq!(
        ex.message.body.as_text().as_deref(),
        Some(absolute.as_str())
    );
}

#[tokio::test]
async fn a_missing_folder_is_created_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("later");
    let refused = Watcher::start("x".into(), watch(&missing, "autoCreate=false")).await;
    assert!(refused.unwrap_err().to_string().contains("does not exist"));
    watcher(&missing, "").await;
    assert!(missing.is_dir());
}

#[tokio::test(start_paused = true)]
async fn the_consumer_stops_when_the_route_does() {
    let dir = tempfile::tempdir().unwrap();
    let ep = endpoint(
        &FileWatchComponent,
        &format!("file-watch:{}?delay=10", dir.path().display()),
    )
    .unwrap();
    let ctx = ConsumerContext::for_pipeline("watch", BoxProcessor::identity());
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    assert!(ep.producer().is_err());
}

#[test]
fn mistakes_are_named() {
    let err = |uri: &str| endpoint(&FileWatchComponent, uri).unwrap_err().to_string();
    assert!(err("file-watch:").contains("needs a folder"));
    assert!(err("file-watch:x?events=CREATE,RENAME").contains("`RENAME` is not an event"));
    assert!(err("file-watch:x?delay=0").contains("more than 0"));
    assert!(err("file-watch:x?antInclud=*").contains("did you mean `antInclude`"));
    assert!(endpoint(
        &FileWatchComponent,
        "file-watch:x?concurrentConsumers=1&pollThreads=1&useFileHashing=true"
    )
    .is_ok());
}
