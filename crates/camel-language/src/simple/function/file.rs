//! `${file:…}`: Camel's file language, read from the headers the `file` consumer sets
//! (`CamelFileName`, `CamelFileNameOnly`, `CamelFileLength`, `CamelFileLastModified`,
//! `CamelFileAbsolutePath`). Without those headers every attribute is null.

use camel_api::{Exchange, Value};

use crate::problem::Problem;

/// The consumer's header with the modification time (milliseconds since the epoch).
pub(crate) const LAST_MODIFIED: &str = "CamelFileLastModified";
const NAME_ONLY: &str = "CamelFileNameOnly";
const LENGTH: &str = "CamelFileLength";
const ABSOLUTE_PATH: &str = "CamelFileAbsolutePath";

/// A file attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attribute {
    Name,
    NameExt,
    NameExtSingle,
    NameNoExt,
    NameNoExtSingle,
    OnlyName,
    OnlyNameNoExt,
    OnlyNameNoExtSingle,
    Parent,
    Path,
    Absolute,
    AbsolutePath,
    Length,
    Modified,
}

const ATTRIBUTES: &[(&str, Attribute)] = &[
    ("name", Attribute::Name),
    ("name.ext", Attribute::NameExt),
    ("ext", Attribute::NameExt),
    ("name.ext.single", Attribute::NameExtSingle),
    ("name.noext", Attribute::NameNoExt),
    ("name.noext.single", Attribute::NameNoExtSingle),
    ("onlyname", Attribute::OnlyName),
    ("onlyname.noext", Attribute::OnlyNameNoExt),
    ("onlyname.noext.single", Attribute::OnlyNameNoExtSingle),
    ("parent", Attribute::Parent),
    ("path", Attribute::Path),
    ("absolute", Attribute::Absolute),
    ("absolute.path", Attribute::AbsolutePath),
    ("length", Attribute::Length),
    ("size", Attribute::Length),
    ("modified", Attribute::Modified),
];

/// Resolves the text after `file:`, at byte `at`.
pub(crate) fn parse(rest: &str, at: usize) -> Result<Attribute, Problem> {
    ATTRIBUTES
        .iter()
        .find(|(n, _)| *n == rest)
        .map(|(_, a)| *a)
        .ok_or_else(|| {
            let names: Vec<&str> = ATTRIBUTES.iter().map(|(n, _)| *n).collect();
            let hint = camel_api::suggest::nearest(rest, names.iter().copied())
                .map(|s| format!("; did you mean `file:{s}`?"))
                .unwrap_or_default();
            Problem::new(at, format!("unknown file attribute `{rest}`{hint}"))
        })
}

/// Splits a path into its folder part (with the trailing `/`) and its last segment.
fn split_last(path: &str) -> (&str, &str) {
    match path.rfind(['/', '\\']) {
        Some(i) => path.split_at(i + 1),
        None => ("", path),
    }
}

/// The extension of a file name: after the first dot, or the last when `single`.
fn extension(name: &str, single: bool) -> Option<&str> {
    let dot = if single {
        name.rfind('.')
    } else {
        name.find('.')
    };
    dot.map(|i| &name[i + 1..])
}

fn without_extension(name: &str, single: bool) -> &str {
    let dot = if single {
        name.rfind('.')
    } else {
        name.find('.')
    };
    dot.map_or(name, |i| &name[..i])
}

fn text(exchange: &Exchange, header: &str) -> Option<String> {
    exchange
        .header(header)
        .filter(|v| !v.is_null())
        .map(Value::to_string)
}

impl Attribute {
    pub(crate) fn value(self, exchange: &Exchange) -> Value {
        let name = || text(exchange, camel_api::names::FILE_NAME);
        let only =
            || text(exchange, NAME_ONLY).or_else(|| name().map(|n| split_last(&n).1.to_owned()));
        let out = match self {
            Attribute::Name => name(),
            Attribute::NameExt | Attribute::NameExtSingle => name().and_then(|n| {
                let single = self == Attribute::NameExtSingle;
                extension(split_last(&n).1, single).map(str::to_owned)
            }),
            Attribute::NameNoExt | Attribute::NameNoExtSingle => name().map(|n| {
                let (folder, last) = split_last(&n);
                let single = self == Attribute::NameNoExtSingle;
                format!("{folder}{}", without_extension(last, single))
            }),
            Attribute::OnlyName => only(),
            Attribute::OnlyNameNoExt => only().map(|n| without_extension(&n, false).to_owned()),
            Attribute::OnlyNameNoExtSingle => {
                only().map(|n| without_extension(&n, true).to_owned())
            }
            Attribute::Parent => text(exchange, ABSOLUTE_PATH).map(|p| {
                let folder = split_last(&p).0;
                folder
                    .strip_suffix(['/', '\\'])
                    .unwrap_or(folder)
                    .to_owned()
            }),
            Attribute::Path | Attribute::AbsolutePath => text(exchange, ABSOLUTE_PATH),
            Attribute::Absolute => {
                return Value::Bool(exchange.header(ABSOLUTE_PATH).is_some());
            }
            Attribute::Length => return raw(exchange, LENGTH),
            Attribute::Modified => return raw(exchange, LAST_MODIFIED),
        };
        out.map_or(Value::Null, |s| Value::Text(s.into()))
    }
}

fn raw(exchange: &Exchange, header: &str) -> Value {
    exchange.header(header).cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_derive_from_the_consumer_headers() {
        let ex = Exchange::new("")
            .with_header("CamelFileName", "in/report.tar.gz")
            .with_header("CamelFileAbsolutePath", "/data/in/report.tar.gz")
            .with_header("CamelFileLength", 42)
            .with_header("CamelFileLastModified", 1000);
        let v = |s: &str| parse(s, 0).unwrap().value(&ex);
        assert_eq!(v("name"), Value::from("in/report.tar.gz"));
        assert_eq!(v("ext"), Value::from("tar.gz"));
        assert_eq!(v("name.ext.single"), Value::from("gz"));
        assert_eq!(v("name.noext"), Value::from("in/report"));
        assert_eq!(v("name.noext.single"), Value::from("in/report.tar"));
        assert_eq!(v("onlyname"), Value::from("report.tar.gz"));
        assert_eq!(v("onlyname.noext"), Value::from("report"));
        assert_eq!(v("onlyname.noext.single"), Value::from("report.tar"));
        assert_eq!(v("parent"), Value::from("/data/in"));
        assert_eq!(v("path"), Value::from("/data/in/report.tar.gz"));
        assert_eq!(v("absolute"), Value::Bool(true));
        assert_eq!(v("size"), Value::Int(42));
        assert_eq!(v("modified"), Value::Int(1000));
        assert_eq!(
            parse("name", 0).unwrap().value(&Exchange::new("")),
            Value::Null
        );
    }

    #[test]
    fn unknown_attribute_is_located_with_a_hint() {
        let e = parse("onlynam", 7).unwrap_err();
        assert_eq!(e.at, 7);
        assert!(e.message.contains("file:onlyname"), "{}", e.message);
    }
}
