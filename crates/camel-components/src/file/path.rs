//! Turning message-supplied names into paths that stay inside the endpoint's folder, and
//! paths back into the `/`-separated names the headers carry.

use std::path::{Component, Path, PathBuf};

use super::FileError;

/// `name` as a path relative to the endpoint folder. Refuses `..`, absolute paths and
/// names that are empty once `.` parts are dropped.
pub(super) fn inside(name: &str) -> Result<PathBuf, FileError> {
    let mut relative = PathBuf::new();
    for part in Path::new(name).components() {
        match part {
            Component::Normal(p) => relative.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(FileError::OutsideFolder(name.to_string()))
            }
        }
    }
    if relative.as_os_str().is_empty() {
        return Err(FileError::EmptyName);
    }
    Ok(relative)
}

/// The `/`-separated name of `path` relative to `base` (`sub/a.txt`).
pub(super) fn relative_name(base: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(base).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// True for names a consumer never takes: dot-files and dot-folders.
pub(super) fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// True when an open refused a final symbolic link: `O_NOFOLLOW` fails with `ELOOP`.
pub(super) fn is_link_refusal(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        error.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        error.get_ref().is_some_and(|e| e.is::<LinkRefused>())
    }
}

/// Where `O_NOFOLLOW` does not exist, the error a checked open returns for a link.
#[cfg(not(unix))]
pub(super) fn link_refused() -> std::io::Error {
    std::io::Error::other(LinkRefused)
}

#[cfg(not(unix))]
#[derive(Debug, thiserror::Error)]
#[error("a symbolic link")]
struct LinkRefused;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_inside_the_folder() {
        assert_eq!(inside("a.txt").unwrap(), PathBuf::from("a.txt"));
        assert_eq!(inside("./sub/b.txt").unwrap(), PathBuf::from("sub/b.txt"));
        for bad in ["../x", "sub/../../x", "/etc/passwd", "a/.."] {
            assert!(
                matches!(inside(bad), Err(FileError::OutsideFolder(_))),
                "{bad} was accepted"
            );
        }
        assert!(matches!(inside(""), Err(FileError::EmptyName)));
        assert!(matches!(inside("./."), Err(FileError::EmptyName)));
    }

    proptest::proptest! {
        /// Whatever a message names, the accepted path is relative and never climbs.
        #[test]
        fn an_accepted_name_never_leaves_the_folder(
            name in r"(\.\.|\.|/|[a-z]{1,3}|\\){0,8}"
        ) {
            if let Ok(path) = inside(&name) {
                proptest::prop_assert!(path.is_relative());
                proptest::prop_assert!(path.components().all(|c| matches!(c, Component::Normal(_))));
                proptest::prop_assert!(!name.split('/').any(|part| part == ".."));
            }
        }
    }

    #[test]
    fn names_are_slash_separated_and_relative() {
        let base = Path::new("/data/in");
        assert_eq!(
            relative_name(base, &base.join("sub").join("a.txt")),
            "sub/a.txt"
        );
        assert!(is_hidden(".camel") && !is_hidden("a.camel"));
    }
}
