//! What the watched folder holds, and the events between two looks at it.
//!
//! A snapshot lists every entry by its path relative to the folder, with its kind,
//! length and modification time read with `lstat`: nothing is opened, so a FIFO, a
//! socket or a device costs no more than a file and cannot block the scan, and a
//! symbolic link is an entry of its own, never followed (a link to `/` or to a parent
//! folder cannot make the scan walk the disk or loop). Folders are entered only when
//! recursive, and the scan stops at [`MAX_ENTRIES`], so a huge tree costs bounded memory.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::SystemTime;

/// The most entries one snapshot holds; past it the rest of the folder is not seen.
pub const MAX_ENTRIES: usize = 100_000;

/// One entry as seen by `lstat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stat {
    pub(super) folder: bool,
    pub(super) length: u64,
    pub(super) modified: Option<SystemTime>,
}

/// The folder's entries by relative, `/`-separated path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub(super) entries: BTreeMap<String, Stat>,
    /// The scan stopped at [`MAX_ENTRIES`].
    pub(super) truncated: bool,
}

/// Camel's file event kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileEvent {
    /// An entry appeared.
    Create,
    /// An entry's length or modification time changed.
    Modify,
    /// An entry went away.
    Delete,
}

impl FileEvent {
    /// The name Camel gives it (`CREATE`, `MODIFY`, `DELETE`).
    pub fn name(self) -> &'static str {
        match self {
            FileEvent::Create => "CREATE",
            FileEvent::Modify => "MODIFY",
            FileEvent::Delete => "DELETE",
        }
    }
}

/// Lists `dir` (its sub-folders too when `recursive`). Only a failure to read `dir`
/// itself is an error; an unreadable sub-folder is left out.
pub(super) fn scan(dir: &Path, recursive: bool) -> io::Result<Snapshot> {
    let mut snapshot = Snapshot::default();
    let mut folders = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = folders.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) if prefix.is_empty() => return Err(e),
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            if snapshot.entries.len() >= MAX_ENTRIES {
                snapshot.truncated = true;
                return Ok(snapshot);
            }
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            // `DirEntry::metadata` does not follow a link: a link is seen as a link.
            let Ok(meta) = entry.metadata() else { continue };
            let folder = meta.file_type().is_dir();
            if folder && recursive {
                folders.push((entry.path(), format!("{name}/")));
            }
            snapshot.entries.insert(
                name,
                Stat {
                    folder,
                    length: if folder { 0 } else { meta.len() },
                    modified: meta.modified().ok(),
                },
            );
        }
    }
    Ok(snapshot)
}

/// The events that turn `before` into `after`, in path order. A folder's own
/// modification time changes with every entry added to it, so a folder only ever
/// appears or goes; an entry that changed between folder and file went and came.
pub(super) fn changes(before: &Snapshot, after: &Snapshot) -> Vec<(FileEvent, String)> {
    let mut events = Vec::new();
    let mut old = before.entries.iter().peekable();
    let mut new = after.entries.iter().peekable();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => return events,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((a, _)), Some((b, _))) => a.cmp(b),
        };
        match order {
            std::cmp::Ordering::Less => {
                if let Some((name, _)) = old.next() {
                    events.push((FileEvent::Delete, name.clone()));
                }
            }
            std::cmp::Ordering::Greater => {
                if let Some((name, _)) = new.next() {
                    events.push((FileEvent::Create, name.clone()));
                }
            }
            std::cmp::Ordering::Equal => {
                if let (Some((name, was)), Some((_, is))) = (old.next(), new.next()) {
                    if was.folder != is.folder {
                        events.push((FileEvent::Delete, name.clone()));
                        events.push((FileEvent::Create, name.clone()));
                    } else if !is.folder && was != is {
                        events.push((FileEvent::Modify, name.clone()));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(length: u64, at: u64) -> Stat {
        Stat {
            folder: false,
            length,
            modified: Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(at)),
        }
    }

    fn snapshot(entries: &[(&str, Stat)]) -> Snapshot {
        Snapshot {
            entries: entries.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            truncated: false,
        }
    }

    #[test]
    fn creates_modifies_and_deletes_in_path_order() {
        let folder = Stat {
            folder: true,
            length: 0,
            modified: None,
        };
        let before = snapshot(&[
            ("a", file(1, 1)),
            ("b", file(1, 1)),
            ("d", folder),
            ("e", file(1, 1)),
        ]);
        let after = snapshot(&[
            ("a", file(1, 1)),
            ("b", file(2, 1)),
            ("c", file(1, 1)),
            (
                "d",
                Stat {
                    modified: Some(SystemTime::now()),
                    ..folder
                },
            ),
            ("e", folder),
        ]);
        assert_eq!(
            changes(&before, &after),
            [
                (FileEvent::Modify, "b".to_string()),
                (FileEvent::Create, "c".to_string()),
                (FileEvent::Delete, "e".to_string()),
                (FileEvent::Create, "e".to_string()),
            ]
        );
        assert_eq!(
            changes(&after, &Snapshot::default()).len(),
            after.entries.len()
        );
        assert!(changes(&after, &after).is_empty());
    }

    #[test]
    fn scans_without_following_links_or_opening_fifos() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "abc").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/", dir.path().join("root-link")).unwrap();
            std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
            let made = std::process::Command::new("mkfifo")
                .arg(dir.path().join("pipe"))
                .status()
                .unwrap();
            assert!(made.success());
        }
        let all = scan(dir.path(), true).unwrap();
        let names: Vec<&str> = all.entries.keys().map(String::as_str).collect();
        #[cfg(unix)]
        assert_eq!(names, ["pipe", "root-link", "sub", "sub/a.txt", "sub/loop"]);
        assert_eq!(all.entries["sub/a.txt"].length, 3);
        let top = scan(dir.path(), false).unwrap();
        assert!(!top.entries.contains_key("sub/a.txt"));
        assert!(scan(&dir.path().join("missing"), true).is_err());
    }
}
