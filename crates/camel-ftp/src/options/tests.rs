use std::sync::Arc;

use super::*;
use camel_api::{BoxPredicate, BoxProcessor, Component, EndpointUri};

/// Compiles `simple` expressions; nothing else.
struct SimpleOnly;

impl ComponentContext for SimpleOnly {
    fn expression(&self, _language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        camel_language::simple(text).map_err(|e| CamelError::processor(e.to_string()))
    }
    fn predicate(&self, language: &str, _text: &str) -> Result<BoxPredicate, CamelError> {
        Err(CamelError::processor(format!("no {language} here")))
    }
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no producer for {uri} here")))
    }
    fn resource(&self, _name: &str) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        None
    }
    fn route_id(&self) -> Option<&str> {
        None
    }
}

fn options(protocol: Protocol, uri: &str) -> Result<FtpOptions, CamelError> {
    let uri = EndpointUri::parse(uri)?;
    FtpOptions::from_uri(protocol, uri, &SimpleOnly)
}

#[test]
fn the_uri_gives_user_password_host_port_and_directory() {
    let o = options(
        Protocol::Ftp,
        "ftp://app:s%40cret@files.example:2121/in/orders?delete=true",
    )
    .expect("valid");
    let c = &o.connection;
    assert_eq!(c.host, "files.example");
    assert_eq!(c.port, 2121);
    assert_eq!(c.username.as_deref(), Some("app"));
    assert_eq!(c.password.as_deref(), Some("s@cret"));
    assert_eq!(o.directory, "in/orders");
    assert!(matches!(o.consumer.after_success, AfterSuccess::Delete));
    assert!(!o.consumer.idempotent);
}

#[test]
fn the_password_never_shows() {
    let o = options(Protocol::Sftp, "sftp://app@h/in?password=hunter2").expect("valid");
    assert_eq!(o.connection.port, 22);
    let shown = format!("{o:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    let o = options(Protocol::Ftp, "ftp://app:hunter2@h/in").expect("valid");
    assert!(!format!("{o:?}").contains("hunter2"));
    let err = options(Protocol::Ftp, "ftp://app:hunter2@h/in?delay=soon").unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
    let ep = crate::FtpComponent::new(Protocol::Ftp)
        .endpoint(
            EndpointUri::parse("ftp://app:hunter2@h/in").expect("uri"),
            &SimpleOnly,
        )
        .expect("endpoint");
    assert!(!ep.uri().contains("hunter2"), "{}", ep.uri());
    assert!(!format!("{ep:?}").contains("hunter2"));
}

#[test]
fn nothing_said_leaves_the_file_and_remembers_it() {
    let o = options(Protocol::Ftp, "ftp://h/in").expect("valid");
    assert!(matches!(o.consumer.after_success, AfterSuccess::Leave));
    assert!(o.consumer.idempotent);
    assert_eq!(o.directory, "in");
    assert_eq!(o.connection.port, 21);
}

#[test]
fn move_is_a_folder_or_an_expression() {
    let o = options(Protocol::Ftp, "ftp://h/in?move=.done/").expect("valid");
    assert!(
        matches!(&o.consumer.after_success, AfterSuccess::Move(MoveTarget::Folder(f)) if f == ".done")
    );
    let o = options(Protocol::Ftp, "ftp://h/in?move=archive/${file:name}.bak").expect("valid");
    assert!(matches!(
        &o.consumer.after_success,
        AfterSuccess::Move(MoveTarget::Expression(_))
    ));
}

#[test]
fn contradictions_and_unsupported_read_locks_are_refused() {
    for (uri, says) in [
        ("ftp://h/in?noop=true&delete=true", "cannot both"),
        (
            "ftp://h/in?delete=true&move=.done",
            "cannot be used together",
        ),
        ("ftp://h/in?readLock=rename", "not supported"),
        ("ftp://h/in?include=(", "regular expression"),
        ("ftp://h/in?fileExist=Move", "expected one of"),
        ("ftp://h/in?bogus=1", "unknown parameter"),
        ("sftp://h/in?strictHostKeyChecking=yes", "knownHostsFile"),
        ("ftp://:21/in", "needs a host"),
    ] {
        let err = options(Protocol::Ftp, uri).expect_err(uri).to_string();
        assert!(err.contains(says), "{uri}: {err}");
    }
}

#[test]
fn camel_case_options_are_read() {
    let o = options(
        Protocol::Sftp,
        "sftp://u@h:2222/in?privateKeyFile=/k&knownHostsFile=/kh&readLock=changed&readLockCheckInterval=2s&antInclude=**/*.csv,*.txt&maxMessagesPerPoll=5&fileExist=Append&tempPrefix=.part-",
    )
    .expect("valid");
    assert!(
        o.connection.strict_host_key_checking,
        "a known hosts file means checking"
    );
    assert_eq!(o.consumer.read_lock, ReadLock::Changed);
    assert_eq!(o.consumer.read_lock_check_interval, Duration::from_secs(2));
    assert_eq!(o.consumer.ant_include.len(), 2);
    assert_eq!(o.consumer.max_messages_per_poll, 5);
    assert_eq!(o.producer.file_exist, FileExist::Append);
    assert_eq!(o.producer.temp_prefix.as_deref(), Some(".part-"));
}

#[test]
fn include_matches_the_whole_name() {
    let o = options(Protocol::Ftp, "ftp://h/in?include=.*\\.csv").expect("valid");
    let r = o.consumer.include.expect("include");
    assert!(r.is_match("a.csv"));
    assert!(!r.is_match("a.csv.tmp"));
}

#[test]
fn join_leaves_no_double_slash() {
    assert_eq!(join("", "a"), "a");
    assert_eq!(join("in/", "a"), "in/a");
    assert_eq!(join("/abs", "a/b"), "/abs/a/b");
}

#[test]
fn implicit_ftps_defaults_to_port_990() {
    let o = options(Protocol::Ftps, "ftps://h/in?isImplicit=true").expect("valid");
    assert!(o.connection.is_implicit);
    assert_eq!(o.connection.port, IMPLICIT_FTPS_PORT);
    let o = options(Protocol::Ftps, "ftps://h:2123/in?is_implicit=true").expect("valid");
    assert_eq!(o.connection.port, 2123, "a port written wins");
    let o = options(Protocol::Ftps, "ftps://h/in").expect("valid");
    assert!(!o.connection.is_implicit);
    assert_eq!(o.connection.port, 21);
    let err = options(Protocol::Ftp, "ftp://h/in?isImplicit=true").expect_err("ftp: refuses it");
    assert!(err.to_string().contains("ftps option"), "{err}");
}

#[test]
fn private_key_uri_is_a_local_file() {
    for (uri, path) in [
        ("sftp://u@h/in?privateKeyUri=file:/keys/app", "/keys/app"),
        ("sftp://u@h/in?privateKeyUri=file:///keys/app", "/keys/app"),
        ("sftp://u@h/in?private_key_uri=/keys/app", "/keys/app"),
        ("sftp://u@h/in?privateKeyFile=/keys/app", "/keys/app"),
    ] {
        let o = options(Protocol::Sftp, uri).expect(uri);
        assert_eq!(
            o.connection.private_key_file.as_deref(),
            Some(std::path::Path::new(path)),
            "{uri}"
        );
    }
    for (uri, says) in [
        (
            "sftp://u@h/in?privateKeyUri=classpath:app.key",
            "local files only",
        ),
        (
            "sftp://u@h/in?privateKeyUri=file://other/app.key",
            "names a host",
        ),
        (
            "sftp://u@h/in?privateKeyUri=/a&privateKeyFile=/b",
            "not both",
        ),
        ("sftp://u@h/in?privateKeyPassphrase=x", "needs the key"),
    ] {
        let err = options(Protocol::Sftp, uri).expect_err(uri).to_string();
        assert!(err.contains(says), "{uri}: {err}");
    }
}

#[test]
fn the_key_passphrase_never_shows() {
    let uri = "sftp://app@h/in?privateKeyFile=/k&privateKeyPassphrase=pp-never-shown";
    let o = options(Protocol::Sftp, uri).expect("valid");
    assert_eq!(
        o.connection.private_key_passphrase.as_deref(),
        Some("pp-never-shown")
    );
    let shown = format!("{o:?} {:?}", o.connection);
    assert!(!shown.contains("pp-never-shown"), "{shown}");
    assert!(shown.contains("privateKeyPassphrase=***"), "{shown}");
    // Also when another parameter is wrong, and in snake_case.
    for bad in [
        format!("{uri}&delay=soon"),
        format!("{uri}&bogus=1"),
        "sftp://app@h/in?private_key_file=/k&private_key_passphrase=pp-never-shown&delay=soon"
            .to_string(),
    ] {
        let err = options(Protocol::Sftp, &bad).expect_err(&bad);
        let text = format!("{err} {err:?}");
        assert!(!text.contains("pp-never-shown"), "{text}");
    }
    let ep = crate::FtpComponent::new(Protocol::Sftp)
        .endpoint(EndpointUri::parse(uri).expect("uri"), &SimpleOnly)
        .expect("endpoint");
    assert!(!ep.uri().contains("pp-never-shown"), "{}", ep.uri());
    assert!(!format!("{ep:?}").contains("pp-never-shown"));
}

/// Camel's `useUserKnownHostsFile`: the user's own known hosts file, when there is one.
#[test]
fn the_user_known_hosts_file_is_found_under_home() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(
        super::connection::known_hosts_in(Some(home.path().into())),
        None
    );
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    let file = home.path().join(".ssh").join("known_hosts");
    std::fs::write(&file, "").unwrap();
    assert_eq!(
        super::connection::known_hosts_in(Some(home.path().into())),
        Some(file)
    );
    assert_eq!(super::connection::known_hosts_in(None), None);
    // The catalog's sftp Kamelets pass it; both values are accepted.
    for value in ["true", "false"] {
        let uri = format!("sftp:h:22/d?username=u&password=p&useUserKnownHostsFile={value}");
        assert!(options(Protocol::Sftp, &uri).is_ok(), "{uri}");
    }
    let o = options(
        Protocol::Sftp,
        "sftp:h:22/d?username=u&password=p&useUserKnownHostsFile=false",
    )
    .unwrap();
    assert_eq!(
        o.connection.known_hosts_file, None,
        "not looked for when off"
    );
}
