//! Finding the real folder a file goes in — a produced file, or a consumed file moved
//! away — so that no symbolic link inside the endpoint folder can carry it outside.
//!
//! A name has already been checked for `..` and absolute paths, but a link already in
//! `DIR` (`DIR/link -> ../elsewhere`, or a planted `DIR/.camel -> /etc`) would still let
//! `link/x.txt` land outside, and `create_dir_all` would even create folders there. So the
//! folders of the name are walked one by one from the canonical `DIR`: a real folder is
//! entered, a missing one is created (with `auto_create`), and a link is resolved and
//! entered only if its target is inside `DIR`. Synchronous: callers run it with the write
//! or rename in one blocking task.

use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use super::super::FileError;

/// The canonical folder, inside the canonical `dir`, that `relative`'s last component is
/// written to. `relative` holds only normal components; `name` is the message's file name,
/// for errors.
pub(super) fn resolve_parent(
    dir: &Path,
    relative: &Path,
    name: &str,
    auto_create: bool,
) -> Result<PathBuf, FileError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FileError::Io { path, source }
    };
    if auto_create {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let root = std::fs::canonicalize(dir).map_err(io(dir))?;
    let mut folder = root.clone();
    let Some(parents) = relative.parent() else {
        return Ok(folder);
    };
    for part in parents.components() {
        let next = folder.join(part);
        folder = enter(&root, &next, name, auto_create)?;
    }
    Ok(folder)
}

/// The canonical folder `next` stands for, created if missing and allowed.
fn enter(root: &Path, next: &Path, name: &str, auto_create: bool) -> Result<PathBuf, FileError> {
    let io = |source| FileError::Io {
        path: next.to_path_buf(),
        source,
    };
    // Two rounds: a folder created by someone else between our look and our mkdir is
    // looked at again rather than reported as an error.
    for _ in 0..2 {
        match std::fs::symlink_metadata(next) {
            Ok(meta) if meta.is_dir() => return Ok(next.to_path_buf()),
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::canonicalize(next).map_err(io)?;
                if !target.starts_with(root) {
                    return Err(FileError::LinkOutside {
                        name: name.to_string(),
                        link: next.to_path_buf(),
                        target,
                    });
                }
                if !std::fs::metadata(&target).map_err(io)?.is_dir() {
                    return Err(io(not_a_folder()));
                }
                return Ok(target);
            }
            Ok(_) => return Err(io(not_a_folder())),
            Err(e) if e.kind() == ErrorKind::NotFound && auto_create => {
                match std::fs::create_dir(next) {
                    Ok(()) => return Ok(next.to_path_buf()),
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(io::Error::other("keeps changing while it is created")))
}

fn not_a_folder() -> io::Error {
    io::Error::new(ErrorKind::NotADirectory, "not a folder")
}
