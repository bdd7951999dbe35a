//! `camel export --kubernetes FILES…`: the manifests and the image recipe that run the
//! routes on Kubernetes.
//!
//! The routes are loaded first, as `camel validate` loads them: a file with errors exports
//! nothing. What the routes use decides what is written (see [`Uses`]): a Service when a
//! route serves HTTP, RBAC for the Lease API when a route is leader-only, a StatefulSet
//! with a volume when an outbox keeps its messages in the embedded SQLite file. See
//! docs/kubernetes.md.

mod manifests;
mod uses;
mod yaml;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::properties::PropertyArgs;
pub(crate) use uses::Uses;

/// `camel export` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ExportArgs {
    /// Route files (YAML) and `.properties` files, as `camel run` takes them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write Kubernetes manifests and a Dockerfile (the only target for now).
    #[arg(long, required = true)]
    kubernetes: bool,
    /// Folder to write into (made if missing; files of the same names are replaced).
    #[arg(long, short = 'o', default_value = "kubernetes")]
    output: PathBuf,
    /// Name of the application (resources, labels, image): lower case letters, digits
    /// and `-`. Default: the first route file's name.
    #[arg(long)]
    name: Option<String>,
    /// Image the Deployment runs. Default: NAME:latest.
    #[arg(long)]
    image: Option<String>,
    /// Replicas. Default 1: a route that is not leader-only runs on every replica.
    #[arg(long, default_value_t = 1)]
    replicas: u32,
    #[command(flatten)]
    properties: PropertyArgs,
}

/// The settings of one export, after defaults.
#[derive(Debug)]
pub(crate) struct Export {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) replicas: u32,
    /// Route files by the name they get in the image (`/app/routes/NAME`).
    pub(crate) route_files: Vec<(String, PathBuf)>,
}

/// Admin API port in the container: probes and metrics.
pub(crate) const ADMIN_PORT: i64 = 9464;
/// `platform-http`/`rest` port in the container (`camel run --port`'s default).
pub(crate) const HTTP_PORT: i64 = 8080;

/// Gives every `{{env:NAME}}` of the files that has no default and no variable a stand-in
/// value, so the routes can be checked here while their real values wait in the cluster's
/// Secret. Call it before any other thread runs: it sets the process's environment.
pub(crate) fn stand_in_env(args: &ExportArgs) {
    let sources = crate::sources::sort(&args.files);
    let mut names = std::collections::BTreeMap::new();
    for file in sources.routes.iter().chain(&sources.properties) {
        if let Ok(text) = std::fs::read_to_string(file) {
            uses::env_placeholders(&text, &mut names);
        }
    }
    for (name, optional) in names {
        let upper = name.to_ascii_uppercase().replace(['.', '-'], "_");
        if !optional && std::env::var_os(&name).is_none() && std::env::var_os(upper).is_none() {
            std::env::set_var(&name, ENV_STAND_IN);
        }
    }
}

/// The value an unset `{{env:NAME}}` takes while an export checks the routes.
const ENV_STAND_IN: &str = "camel-export-stand-in";

pub(crate) async fn run(args: ExportArgs) -> ExitCode {
    match export(&args).await {
        Ok(written) => {
            for file in written {
                println!("wrote {}", file.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(crate::shutdown::STARTUP_ERROR)
        }
    }
}

async fn export(args: &ExportArgs) -> Result<Vec<PathBuf>, String> {
    // Checked as they will load in the pod the manifests are for.
    let routes = match crate::run::check(&args.files, &args.properties, true).await {
        Ok(routes) => routes,
        Err(crate::run::Checked::Unreadable(e)) => return Err(e),
        Err(crate::run::Checked::Errors(errors)) => {
            crate::run::report(&errors);
            return Err(format!(
                "{} error(s) in the route files: nothing exported",
                errors.len()
            ));
        }
    };
    let sources = crate::sources::sort(&args.files);
    let properties = args
        .properties
        .load_with(&sources.routes, &sources.properties)?;
    let texts: Vec<String> = sources
        .routes
        .iter()
        .map(|f| std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display())))
        .collect::<Result<_, _>>()?;
    let uses = Uses::of(&routes, &texts, &properties);
    let first = sources
        .routes
        .first()
        .ok_or("no route file given (YAML files hold the routes)")?;
    let name = match &args.name {
        Some(n) => checked_name(n)?,
        None => name_from(first),
    };
    let mut route_files: Vec<(String, PathBuf)> = Vec::new();
    for file in &sources.routes {
        let base = file
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{}: not a file name", file.display()))?
            .to_string();
        if route_files.iter().any(|(b, _)| *b == base) {
            return Err(format!(
                "two route files are named {base}: the image keeps them in one folder"
            ));
        }
        route_files.push((base, file.clone()));
    }
    if uses.embedded_state && args.replicas > 1 {
        eprintln!(
            "note: the routes keep data in a SQLite file of the pod (an outbox without a \
             datasource, or a sqlite: database): one replica, not {}",
            args.replicas
        );
    }
    let export = Export {
        image: args
            .image
            .clone()
            .unwrap_or_else(|| format!("{name}:latest")),
        name,
        replicas: args.replicas,
        route_files,
    };
    write(&args.output, &export, &uses)
}

fn write(dir: &Path, export: &Export, uses: &Uses) -> Result<Vec<PathBuf>, String> {
    let routes_dir = dir.join("routes");
    std::fs::create_dir_all(&routes_dir).map_err(|e| format!("{}: {e}", routes_dir.display()))?;
    let mut written = Vec::new();
    let mut put = |path: PathBuf, text: &str| -> Result<(), String> {
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    for (base, file) in &export.route_files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        put(routes_dir.join(base), &text)?;
    }
    for (file, text) in manifests::render(export, uses) {
        put(dir.join(file), &text)?;
    }
    Ok(written)
}

/// The application name from a route file's name: `orders.camel.yaml` → `orders`.
fn name_from(file: &Path) -> String {
    let stem = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('.').next())
        .unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name = name.trim_matches('-').chars().take(50).collect();
    let name = name.trim_end_matches('-').to_string();
    if name.is_empty() || name == "routes" {
        "camel-routes".to_string()
    } else {
        name
    }
}

/// A name Kubernetes takes for every resource written (a DNS label, with room for the
/// suffixes added to it).
fn checked_name(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 50
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(name.to_string())
    } else {
        Err(format!(
            "--name {name:?}: use 1 to 50 lower-case letters, digits and `-`, not at either end"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_file_and_are_checked() {
        assert_eq!(
            name_from(Path::new("dir/Orders_API.camel.yaml")),
            "orders-api"
        );
        assert_eq!(name_from(Path::new("routes.yaml")), "camel-routes");
        assert_eq!(name_from(Path::new("__.yaml")), "camel-routes");
        assert!(checked_name("orders").is_ok());
        assert!(checked_name("Orders").is_err());
        assert!(checked_name("-orders").is_err());
        assert!(checked_name(&"a".repeat(51)).is_err());
    }
}
