//! Where `camel run` and `camel validate` take the values of property placeholders from,
//! lowest precedence first: `application.properties` beside the first route file, each
//! `--properties FILE` in the order given, then each `--property KEY=VALUE`. A later
//! source wins: what is given explicitly on the command line beats the implicit file,
//! and a single value beats a file (as in Camel JBang, where `--prop` overrides).

use std::path::{Path, PathBuf};

use camel_core::properties::{Properties, PropertyError};

/// The property flags (the names of Camel JBang's flags).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct PropertyArgs {
    /// A file of property values for `{{key}}` placeholders (`.properties`, or YAML for
    /// `.yaml`/`.yml`); repeatable, a later file wins.
    #[arg(long = "properties", value_name = "FILE")]
    property_files: Vec<PathBuf>,
    /// One property value, KEY=VALUE; repeatable; wins over every file.
    #[arg(long = "property", visible_alias = "prop", value_name = "KEY=VALUE")]
    property_values: Vec<String>,
    /// Where Kamelet definitions come from.
    #[command(flatten)]
    pub(crate) kamelets: crate::sources::KameletArgs,
}

impl PropertyArgs {
    /// Reads every source now (a reload calls it again, so edited files count).
    /// Checked here rather than by clap, whose error echoes the argument: one written
    /// without its key may be a secret.
    /// `named` are the properties files given among the route files (`camel run *` in a
    /// JBang folder), read after the one beside them and before `--properties`.
    pub(crate) fn load_with(
        &self,
        route_files: &[PathBuf],
        named: &[PathBuf],
    ) -> Result<Properties, String> {
        let mut props = Properties::new();
        if let Some(first) = route_files.first() {
            let dir = first
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let beside = dir.join("application.properties");
            if beside.is_file() {
                props.merge(Properties::read_file(&beside).map_err(message)?);
            }
        }
        for file in named.iter().chain(&self.property_files) {
            props.merge(Properties::read_file(file).map_err(message)?);
        }
        for (i, arg) in self.property_values.iter().enumerate() {
            match arg.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => props.set(k.trim(), v),
                _ => {
                    return Err(format!(
                        "--property number {} is not KEY=VALUE with a non-empty KEY",
                        i + 1
                    ))
                }
            }
        }
        Ok(props)
    }
}

fn message(e: PropertyError) -> String {
    e.to_string()
}
