//! Listing the consumer's folder: which entries are files to take, which are folders to
//! descend into, and which are skipped and why.
//!
//! Only regular files are taken. FIFOs, sockets and devices are skipped without being
//! opened (opening a FIFO for reading blocks until a writer appears). A symbolic link is
//! skipped unless `follow_symlinks` is set, and even then only when its target resolves
//! inside the endpoint folder: a message source cannot plant `in/x -> /etc/shadow` and
//! have the route read and move it. One bad entry never fails the listing; it is
//! reported as skipped and the rest of the folder is still taken.

use std::collections::HashSet;
use std::fmt;
use std::fs::FileType;
use std::io;
use std::path::{Path, PathBuf};

use super::super::path::{is_hidden, relative_name};
use super::super::{AfterSuccess, ConsumerOptions, FileError};

/// One file found by a poll.
#[derive(Debug)]
pub(super) struct Found {
    /// `/`-separated, relative to the endpoint folder; also the sort key.
    pub(super) name: String,
    /// The entry in the folder: what is moved or deleted after the route.
    pub(super) path: PathBuf,
    /// What is read: `path`, or the resolved target of a followed symbolic link.
    pub(super) open: PathBuf,
}

/// Why an entry was not taken.
#[derive(Debug)]
pub(super) enum Skip {
    /// A symbolic link and `follow_symlinks` is off.
    Symlink,
    /// A symbolic link whose target is outside the endpoint folder.
    OutsideFolder(PathBuf),
    /// A file when listed, a symbolic link when opened.
    BecameSymlink,
    /// Not a regular file: a FIFO, a socket, a device.
    NotRegular(&'static str),
    /// Its type, target or contents could not be read.
    Unreadable(io::Error),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Symlink => f.write_str("a symbolic link (set follow_symlinks to take it)"),
            Skip::OutsideFolder(target) => write!(
                f,
                "a symbolic link to `{}`, outside the endpoint folder",
                target.display()
            ),
            Skip::BecameSymlink => f.write_str("replaced by a symbolic link since the listing"),
            Skip::NotRegular(kind) => write!(f, "not a regular file but a {kind}"),
            Skip::Unreadable(error) => write!(f, "cannot be read: {error}"),
        }
    }
}

/// The outcome of one listing.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// Files to take, sorted by name. Not cut to `max_messages_per_poll`: the poll counts
    /// the files it sends, so unreadable files at the head cannot use up the allowance.
    pub(super) files: Vec<Found>,
    /// Entries passed over, by relative name.
    pub(super) skipped: Vec<(String, Skip)>,
}

/// Lists `dir`. `done` holds the names already taken under `noop`. Only a failure to
/// read `dir` itself is an error.
pub(super) async fn list(
    dir: &Path,
    options: &ConsumerOptions,
    done: &HashSet<String>,
) -> Result<Listing, FileError> {
    let scan = Scan::new(dir, options).await;
    let mut listing = Listing::default();
    let mut folders = vec![dir.to_path_buf()];
    // Canonical folders already listed: a followed link back up the tree is not a loop.
    let mut visited: HashSet<PathBuf> = scan.root.iter().cloned().collect();
    while let Some(folder) = folders.pop() {
        let entries = match read_folder(&folder).await {
            Ok(entries) => entries,
            Err(source) if folder == dir => {
                return Err(FileError::Io {
                    path: folder,
                    source,
                })
            }
            Err(error) => {
                let name = relative_name(dir, &folder);
                listing.skipped.push((name, Skip::Unreadable(error)));
                continue;
            }
        };
        for (path, kind) in entries {
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if is_hidden(&file_name) {
                continue;
            }
            let name = relative_name(dir, &path);
            match scan.classify(&path, kind).await {
                Ok(Kind::Folder(canonical)) => {
                    let fresh = canonical.is_none_or(|c| visited.insert(c));
                    if options.recursive && fresh && !scan.is_move_folder(&path) {
                        folders.push(path);
                    }
                }
                Ok(Kind::File(open)) => {
                    if wanted(options, &file_name) && ours(options, &name) && !done.contains(&name)
                    {
                        listing.files.push(Found { name, path, open });
                    }
                }
                // Only a name the consumer would have taken is worth a warning.
                Err(skip) if wanted(options, &file_name) => listing.skipped.push((name, skip)),
                Err(_) => {}
            }
        }
    }
    listing.files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(listing)
}

fn wanted(options: &ConsumerOptions, file_name: &str) -> bool {
    options
        .include
        .as_ref()
        .is_none_or(|p| p.matches(file_name))
        && !options
            .exclude
            .as_ref()
            .is_some_and(|p| p.matches(file_name))
}

/// Whether a partitioned consumer owns the file of relative `name`.
fn ours(options: &ConsumerOptions, name: &str) -> bool {
    options
        .partition
        .is_none_or(|(k, n)| camel_cluster::partition_of(name, n) == k)
}

/// The entries of `folder` with their own type (a link is a link, not its target). An
/// entry whose type cannot be read is given as `Err` so the caller can skip it alone.
async fn read_folder(folder: &Path) -> io::Result<Vec<(PathBuf, io::Result<FileType>)>> {
    let mut entries = tokio::fs::read_dir(folder).await?;
    let mut out = Vec::new();
    while let Some(entry) = entries.next_entry().await? {
        let kind = entry.file_type().await;
        out.push((entry.path(), kind));
    }
    Ok(out)
}

/// What an entry is, once links are resolved.
enum Kind {
    /// A folder; with its canonical path when links are followed.
    Folder(Option<PathBuf>),
    /// A regular file and the path to open.
    File(PathBuf),
}

/// What the listing needs to decide about one entry.
struct Scan<'a> {
    dir: &'a Path,
    options: &'a ConsumerOptions,
    /// The canonical endpoint folder; `Some` only when links are followed.
    root: Option<PathBuf>,
    /// The canonical `move` and `move_failed` folders, when links are followed.
    canonical_move_folders: Vec<PathBuf>,
}

impl<'a> Scan<'a> {
    async fn new(dir: &'a Path, options: &'a ConsumerOptions) -> Scan<'a> {
        let (root, canonical_move_folders) = if options.follow_symlinks {
            let mut moved = Vec::new();
            for folder in move_folders(options) {
                if let Ok(canonical) = tokio::fs::canonicalize(folder).await {
                    moved.push(canonical);
                }
            }
            (tokio::fs::canonicalize(dir).await.ok(), moved)
        } else {
            (None, Vec::new())
        };
        Scan {
            dir,
            options,
            root,
            canonical_move_folders,
        }
    }

    async fn classify(&self, path: &Path, kind: io::Result<FileType>) -> Result<Kind, Skip> {
        let kind = kind.map_err(Skip::Unreadable)?;
        if kind.is_symlink() {
            return self.resolve(path).await;
        }
        if kind.is_dir() {
            // With links followed, a folder may also be reached through one: its
            // canonical path lets the listing enter it once.
            let canonical = match self.root {
                Some(_) => tokio::fs::canonicalize(path).await.ok(),
                None => None,
            };
            return Ok(Kind::Folder(canonical));
        }
        if kind.is_file() {
            return Ok(Kind::File(path.to_path_buf()));
        }
        Err(Skip::NotRegular(special_kind(&kind)))
    }

    /// A link's target, when links are followed and it stays inside the folder.
    async fn resolve(&self, link: &Path) -> Result<Kind, Skip> {
        if !self.options.follow_symlinks {
            return Err(Skip::Symlink);
        }
        let root = self.root.as_ref().ok_or_else(|| {
            Skip::Unreadable(io::Error::other(format!(
                "the folder `{}` cannot be resolved",
                self.dir.display()
            )))
        })?;
        let target = tokio::fs::canonicalize(link)
            .await
            .map_err(Skip::Unreadable)?;
        // The target's place relative to the folder decides, not the link's: a link to a
        // dot-folder or to the move folder would otherwise take moved files again.
        let inside = target
            .strip_prefix(root)
            .ok()
            .filter(|rest| {
                !rest
                    .components()
                    .any(|c| is_hidden(&c.as_os_str().to_string_lossy()))
            })
            .is_some();
        let in_move_folder = self
            .canonical_move_folders
            .iter()
            .any(|m| target.starts_with(m));
        if !inside || in_move_folder {
            return Err(Skip::OutsideFolder(target));
        }
        let kind = tokio::fs::metadata(&target)
            .await
            .map_err(Skip::Unreadable)?
            .file_type();
        if kind.is_dir() {
            Ok(Kind::Folder(Some(target)))
        } else if kind.is_file() {
            Ok(Kind::File(target))
        } else {
            Err(Skip::NotRegular(special_kind(&kind)))
        }
    }

    fn is_move_folder(&self, path: &Path) -> bool {
        move_folders(self.options).any(|m| m == path)
    }
}

fn move_folders(options: &ConsumerOptions) -> impl Iterator<Item = &Path> {
    let moved = match &options.after_success {
        AfterSuccess::MoveTo(target) => Some(target.as_path()),
        _ => None,
    };
    moved.into_iter().chain(options.move_failed.as_deref())
}

/// A name for a file type that is not a regular file.
pub(super) fn special_kind(kind: &FileType) -> &'static str {
    if kind.is_dir() {
        return "folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "device";
        }
    }
    let _ = kind;
    "special file"
}
