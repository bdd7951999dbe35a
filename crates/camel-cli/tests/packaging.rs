//! The licence and repository every crate declares are the ones the repository holds.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_license_file_is_the_license_the_crates_declare() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("license = \"Apache-2.0\""),
        "the workspace licence"
    );
    assert!(manifest.contains("repository = \"https://github.com/camel-rs/camel-rs\""));
    let license = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    assert!(license.contains("Apache License") && license.contains("Version 2.0, January 2004"));
}

#[test]
fn every_crate_takes_the_workspace_license_and_repository() {
    let mut missing = Vec::new();
    for dir in ["crates", "examples"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            let manifest = entry.path().join("Cargo.toml");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            for key in ["license.workspace = true", "repository.workspace = true"] {
                if !text.contains(key) {
                    missing.push(format!("{}: {key}", manifest.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
