//! What the files on the command line are, and where Kamelet definitions come from.
//!
//! `camel run *` in a Camel JBang example folder names every file there: YAML files are
//! route files (Kamelets and Pipes included), `*.properties` files are properties (read
//! as `--properties` would, after `application.properties` beside the first route file),
//! and the folder's other files (README, metadata, pictures, SQL scripts, Java sources)
//! are passed over with a note, as Camel JBang passes over what it cannot load. Kamelets are read
//! from `--kamelets` folders, then the built-in ones, then `*.kamelet.yaml` beside the
//! route files, then the route files themselves: a later definition of a name wins
//! (ADR 0116).

use std::path::{Path, PathBuf};

use camel_core::RouteDefinition;
use camel_core::RouteError;

use crate::properties::PropertyArgs;

/// A Kamelet file larger than this is not read (catalog Kamelets are a few KiB, their
/// icons included).
const MAX_KAMELET_FILE: u64 = 4 << 20;
/// Kamelet files read from the folders at most (Camel's catalog has about 250).
const MAX_KAMELET_FILES: usize = 10_000;

/// Extensions of route files: YAML (`*.camel.yaml`, Kamelets and Pipes among them).
/// Everything else a JBang example folder holds beside its routes (README, metadata,
/// pictures, SQL scripts, XSLT sheets, certificates, Terraform files, templates of
/// properties) is passed over, as Camel JBang keeps such files as resources rather than
/// routes. A file without an extension is read as a route file.
const ROUTES: &[&str] = &["yaml", "yml", ""];
/// Route files in a JVM language: Camel JBang runs them, camel-rs cannot.
const JVM_ROUTES: &[&str] = &["java", "groovy", "kts", "js", "xml", "jsh"];

/// The files of the command line, sorted by what they are.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    pub(crate) routes: Vec<PathBuf>,
    pub(crate) properties: Vec<PathBuf>,
}

/// Sorts `files`: route files, properties files, and the others left out with a note.
pub(crate) fn sort(files: &[PathBuf]) -> Sources {
    let mut sources = Sources::default();
    for file in files {
        let ext = file
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if ext == "properties" {
            sources.properties.push(file.clone());
        } else if file.is_dir() {
            tracing::info!(file = %file.display(), "not a route file: passed over");
        } else if JVM_ROUTES.contains(&ext.as_str()) {
            tracing::warn!(
                file = %file.display(),
                "routes written in Java, XML, Groovy or JavaScript cannot run here; \
                 camel-rs reads YAML routes: passed over"
            );
        } else if ROUTES.contains(&ext.as_str()) {
            sources.routes.push(file.clone());
        } else {
            tracing::info!(file = %file.display(), "not a route file: passed over");
        }
    }
    sources
}

/// Options that say where Kamelet definitions come from.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct KameletArgs {
    /// A folder of Kamelet definitions (`*.kamelet.yaml`, also under its `kamelets/`
    /// folder: a checkout of Camel's kamelet catalog will do); repeatable. Camel JBang's
    /// `--local-kamelet-dir` is the same option.
    #[arg(
        long = "kamelets",
        visible_alias = "local-kamelet-dir",
        value_name = "DIR"
    )]
    pub(crate) dirs: Vec<PathBuf>,
}

/// The texts of the Kamelet files of the `--kamelets` folders, in the order given.
pub(crate) fn kamelet_texts(args: &KameletArgs) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    for dir in &args.dirs {
        if !dir.is_dir() {
            return Err(format!(
                "--kamelets {}: not a folder (give the folder holding the .kamelet.yaml files)",
                dir.display()
            ));
        }
        kamelet_files(dir, &mut files);
        kamelet_files(&dir.join("kamelets"), &mut files);
    }
    if files.len() > MAX_KAMELET_FILES {
        return Err(format!(
            "more than {MAX_KAMELET_FILES} Kamelet files in the --kamelets folders"
        ));
    }
    let mut texts = Vec::new();
    for file in files {
        if let Some(text) = read_kamelet(&file) {
            texts.push((text, file.display().to_string()));
        }
    }
    Ok(texts)
}

/// The `*.kamelet.yaml` files beside the route files that are not route files already:
/// read with them, as the user's own Kamelets. Also those of a `kamelets/` folder beside
/// the route files, and, for route files in a folder named `camel`, of the `kamelets/`
/// folder beside that one: the `src/main/resources/{camel,kamelets}` layout of a Maven
/// project that runs Camel's KameletMain, which finds its Kamelets on the classpath.
pub(crate) fn beside(routes: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for route in routes {
        let dir = route
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dirs.iter().any(|d| d == dir) {
            dirs.push(dir.to_path_buf());
        }
    }
    let mut files = Vec::new();
    for dir in &dirs {
        kamelet_files(&dir.join("kamelets"), &mut files);
        if dir.file_name().is_some_and(|n| n == "camel") {
            if let Some(parent) = dir.parent() {
                kamelet_files(&parent.join("kamelets"), &mut files);
            }
        }
    }
    // The files directly beside the routes last: nearer definitions win.
    for dir in &dirs {
        kamelet_files(dir, &mut files);
    }
    files.retain(|f| !routes.iter().any(|r| same_file(r, f)) && regular(f));
    files
}

/// The text of a Kamelet file of a folder, unless it is not a regular file of a sane
/// size: a FIFO or a device named `x.kamelet.yaml` would block or never end.
fn read_kamelet(file: &Path) -> Option<String> {
    if !regular(file) {
        tracing::warn!(file = %file.display(), "not a regular Kamelet file of at most 4 MiB: passed over");
        return None;
    }
    match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "cannot read this Kamelet file");
            None
        }
    }
}

fn regular(file: &Path) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.len() <= MAX_KAMELET_FILE)
}

/// The `*.kamelet.yaml` files directly in `dir`, sorted by name.
fn kamelet_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".kamelet.yaml") || n.ends_with(".kamelet.yml"))
        })
        .take(MAX_KAMELET_FILES + 1)
        .collect();
    found.sort();
    out.extend(found);
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Loads the route files among `files` as one context, with their properties and
/// Kamelets: the routes that loaded and every error (`camel validate`), or an error
/// that stops everything (a properties file that cannot be read).
pub(crate) fn load_partial(
    files: &[PathBuf],
    args: &PropertyArgs,
) -> Result<(Vec<RouteDefinition>, Vec<RouteError>), String> {
    let mut sources = sort(files);
    let properties = args.load_with(&sources.routes, &sources.properties)?;
    let texts = kamelet_texts(&args.kamelets)?;
    // Beside Kamelets first: a file named on the command line is read later and wins.
    let mut routes = beside(&sources.routes);
    routes.append(&mut sources.routes);
    Ok(camel_core::yaml::load_files_with_kamelets(
        &routes,
        &texts,
        &properties,
    ))
}

/// Registers the database the properties name as Spring Boot or Quarkus do
/// (`spring.datasource.url` …, `quarkus.datasource.jdbc.url` …), as the datasource of
/// `sql:` endpoints that name none: a Camel JBang example's `application.properties` then
/// works as it is.
pub(crate) fn register_datasource(
    ctx: &camel_core::CamelContext,
    files: &[PathBuf],
    args: &PropertyArgs,
    for_pod: bool,
) -> Result<(), String> {
    let sources = sort(files);
    let properties = args.load_with(&sources.routes, &sources.properties)?;
    if let Some(url) =
        camel_sql::datasource_from_properties(|k| properties.get(k).map(str::to_string))?
    {
        ctx.add_resource(camel_sql::DATASOURCE_RESOURCE, std::sync::Arc::new(url));
    }
    crate::cluster::register(ctx, &properties, for_pod)
}

/// True when the properties of the run (files and `--property`) set `key` to `true`.
pub(crate) fn property_is_true(
    files: &[PathBuf],
    args: &PropertyArgs,
    key: &str,
) -> Result<bool, String> {
    let sources = sort(files);
    let properties = args.load_with(&sources.routes, &sources.properties)?;
    Ok(properties
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")))
}
