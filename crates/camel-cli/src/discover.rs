//! `camel run` without files: the route files of the current folder, as Camel JBang picks
//! them up — every `*.camel.yaml` (or `.camel.yml`) and `application.properties`.

use std::path::{Path, PathBuf};

/// The route files and `application.properties` directly in `dir` (not in sub-folders),
/// sorted by name. Only regular files count (a link to one too): a folder, a FIFO or a
/// socket named `x.camel.yaml` is passed over, so nothing blocks on a read.
pub(crate) fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list the folder {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut routes = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let route = name.ends_with(".camel.yaml") || name.ends_with(".camel.yml");
        if !route && name != "application.properties" {
            continue;
        }
        let path = entry.path();
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        routes += usize::from(route);
        // Relative to the folder, as a user would have typed them.
        files.push(PathBuf::from(name));
    }
    if routes == 0 {
        return Err(format!(
            "no route files given, and no *.camel.yaml file in {}: name the files \
             (`camel run routes.yaml`) or write one (`camel init NAME`)",
            dir.display()
        ));
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_route_files_and_application_properties_only() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "b.camel.yaml",
            "a.camel.yml",
            "application.properties",
            "other.yaml",
            "README.md",
            "x.properties",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("folder.camel.yaml")).unwrap();
        let files = files_in(dir.path()).unwrap();
        assert_eq!(
            files,
            ["a.camel.yml", "application.properties", "b.camel.yaml"]
                .map(PathBuf::from)
                .to_vec()
        );
    }

    #[test]
    fn a_folder_without_route_files_is_an_error_that_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("application.properties"), "").unwrap();
        let e = files_in(dir.path()).unwrap_err();
        assert!(
            e.contains("no *.camel.yaml") && e.contains("camel init"),
            "{e}"
        );
    }
}
