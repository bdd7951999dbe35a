//! The `ftp:`, `ftps:` and `sftp:` producers against the real servers: upload under
//! `fileName` or `CamelFileName` into sub-folders, `fileExist` (Override, Fail, Ignore,
//! Append), `tempPrefix` leaving no temporary file, and names that would leave the
//! directory refused.

mod support;

use support::{send, servers};

fn read(server: &support::Server, relative: &str) -> String {
    std::fs::read_to_string(server.path(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_follow_file_exist_and_temp_prefix() {
    for server in servers() {
        let dir = server.folder("produce");
        let p = server.protocol;
        // CamelFileName with a sub-folder, created on the way.
        let done = send(&server, &server.uri(&dir, ""), "first", Some("sub/a.txt"))
            .await
            .unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert_eq!(read(&server, &format!("{dir}/sub/a.txt")), "first");
        assert_eq!(
            done.header("CamelFileNameProduced").map(|v| v.to_string()),
            Some(format!("{dir}/sub/a.txt"))
        );
        // Override (the default) through a temporary name.
        let uri = server.uri(&dir, "tempPrefix=.part-");
        send(&server, &uri, "second", Some("sub/a.txt"))
            .await
            .unwrap();
        assert_eq!(read(&server, &format!("{dir}/sub/a.txt")), "second");
        assert_eq!(
            server.files(&format!("{dir}/sub")),
            ["a.txt"],
            "{p:?}: no temporary file left"
        );
        // Fail: refused, the file unchanged.
        let uri = server.uri(&dir, "fileExist=Fail");
        let err = send(&server, &uri, "third", Some("sub/a.txt"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("already exists"), "{p:?}: {err}");
        assert_eq!(read(&server, &format!("{dir}/sub/a.txt")), "second");
        // Ignore: succeeds, the file unchanged; a new name is written.
        let uri = server.uri(&dir, "fileExist=Ignore");
        send(&server, &uri, "third", Some("sub/a.txt"))
            .await
            .unwrap();
        assert_eq!(read(&server, &format!("{dir}/sub/a.txt")), "second");
        send(&server, &uri, "new", Some("b.txt")).await.unwrap();
        assert_eq!(read(&server, &format!("{dir}/b.txt")), "new");
        // Append.
        let uri = server.uri(&dir, "fileExist=Append");
        send(&server, &uri, "+more", Some("sub/a.txt"))
            .await
            .unwrap();
        assert_eq!(read(&server, &format!("{dir}/sub/a.txt")), "second+more");
        // fileName as a simple expression wins over the header.
        let uri = server.uri(&dir, "fileName=named-${body}.txt");
        send(&server, &uri, "x", Some("ignored.txt")).await.unwrap();
        assert_eq!(read(&server, &format!("{dir}/named-x.txt")), "x");
        // No name at all: the exchange id.
        send(&server, &server.uri(&dir, ""), "by id", None)
            .await
            .unwrap();
        assert_eq!(server.files(&dir).len(), 3, "{:?}", server.files(&dir));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_leaving_the_directory_are_refused() {
    for server in servers() {
        let dir = server.folder("outside");
        for name in ["../escape.txt", "/etc/escape.txt", "a/../../escape.txt"] {
            let err = send(&server, &server.uri(&dir, ""), "x", Some(name))
                .await
                .unwrap_err();
            assert!(err.to_string().contains("inside"), "{name}: {err}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_fails_without_showing_it() {
    for server in servers() {
        if server.protocol == camel_ftp::Protocol::Sftp {
            continue;
        }
        let uri = server.uri("x", "password=wrong-secret-42");
        let err = send(&server, &uri, "x", Some("a.txt")).await.unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(text.contains("logging in"), "{text}");
        assert!(!text.contains("wrong-secret-42"), "{text}");
    }
}
