//! Path templates of `platform-http:` routes (`/orders/{id}`) and their matching.
//!
//! A pure type: the server's table asks it "does this request path match, and with
//! which parameters"; it holds no state.

use std::fmt;

use camel_api::percent_decode;

/// One segment of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// A path template: literal segments and `{name}` parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathTemplate {
    text: String,
    segments: Vec<Segment>,
}

impl PathTemplate {
    /// Parses `/orders/{id}`; a missing leading `/` is added. Refuses empty or unclosed
    /// parameter names and a name used twice.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let normalized = format!("/{}", trimmed.trim_start_matches('/'));
        let mut segments = Vec::new();
        for raw in split(&normalized) {
            let segment = match raw.strip_prefix('{') {
                Some(rest) => {
                    let name = rest
                        .strip_suffix('}')
                        .ok_or_else(|| format!("segment `{raw}` opens `{{` without closing it"))?;
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
                        return Err(format!(
                            "`{raw}` is not a parameter name (letters, digits, `_`, `-`)"
                        ));
                    }
                    if segments
                        .iter()
                        .any(|s| matches!(s, Segment::Param(n) if n == name))
                    {
                        return Err(format!("parameter `{name}` appears twice"));
                    }
                    Segment::Param(name.to_string())
                }
                None if raw.contains(['{', '}']) => {
                    return Err(format!(
                    "segment `{raw}`: a parameter must be a whole segment, as in `/orders/{{id}}`"
                ))
                }
                None => Segment::Literal(raw.to_string()),
            };
            segments.push(segment);
        }
        Ok(PathTemplate {
            text: normalized,
            segments,
        })
    }

    /// The parameters when `path` matches, percent-decoded; `None` otherwise.
    pub(crate) fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let mut params = Vec::new();
        let mut parts = split(path);
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                // Decoding allocates; most request paths have nothing to decode.
                Segment::Literal(l) if !part.contains('%') && l == part => {}
                Segment::Literal(l) if part.contains('%') && *l == percent_decode(part) => {}
                Segment::Literal(_) => return None,
                Segment::Param(name) if !part.is_empty() => {
                    params.push((name.clone(), percent_decode(part)));
                }
                Segment::Param(_) => return None,
            }
        }
        parts.next().is_none().then_some(params)
    }

    /// How many parameters the template has: with two templates matching one path, the one
    /// with fewer parameters (more literal segments) is the more specific and wins.
    pub(crate) fn param_count(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| matches!(s, Segment::Param(_)))
            .count()
    }

    /// True when both templates match the same paths (`/a/{x}` and `/a/{y}`).
    pub(crate) fn same_shape(&self, other: &PathTemplate) -> bool {
        self.segments.len() == other.segments.len()
            && self
                .segments
                .iter()
                .zip(&other.segments)
                .all(|(a, b)| match (a, b) {
                    (Segment::Literal(x), Segment::Literal(y)) => x == y,
                    (Segment::Param(_), Segment::Param(_)) => true,
                    _ => false,
                })
    }
}

impl fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The segments of a path; one trailing `/` is ignored so `/hello/` finds `/hello`.
fn split(path: &str) -> impl Iterator<Item = &str> {
    let inner = path.strip_prefix('/').unwrap_or(path);
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    inner.split('/').filter({
        let root = inner.is_empty();
        move |_| !root
    })
}

/// Whether `path` has a `.` or `..` segment once percent-decoded, with `\` counted as a
/// separator as URL parsers do for `http` and a segment's `;parameters` left out as
/// servlet containers do: such a path names another place than it spells
/// (`/api/%2e%2e/admin` is `/admin`). The server refuses such request paths and the
/// producer refuses to append one to its base path, so a proxy route cannot be walked out
/// of the backend path it was given.
pub(crate) fn has_dot_segment(path: &str) -> bool {
    // Nothing decodes to a dot without a `%`: most paths are answered here.
    if !path.contains(['.', '%']) {
        return false;
    }
    let decoded = percent_decode(path);
    // Servlet containers drop a segment's `;parameters` before resolving dots, so
    // `..;x` is `..` to a Tomcat or Jetty backend.
    decoded.split(['/', '\\']).any(|s| {
        let s = s.split(';').next().unwrap_or(s);
        s == "." || s == ".."
    })
}

/// The pairs of a query string, decoded (`+` is a space there).
pub(crate) fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (
            percent_decode(&k.replace('+', " ")),
            percent_decode(&v.replace('+', " ")),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_parameter_segments() {
        let t = PathTemplate::parse("/orders/{id}").unwrap();
        assert_eq!(
            t.matches("/orders/42"),
            Some(vec![("id".into(), "42".into())])
        );
        assert_eq!(
            t.matches("/orders/a%20b/"),
            Some(vec![("id".into(), "a b".into())])
        );
        assert_eq!(t.matches("/orders"), None);
        assert_eq!(t.matches("/orders/"), None);
        assert_eq!(t.matches("/orders/1/items"), None);
        assert_eq!(t.matches("/order/1"), None);
    }

    #[test]
    fn root_and_missing_slash() {
        let root = PathTemplate::parse("/").unwrap();
        assert_eq!(root.matches("/"), Some(vec![]));
        assert_eq!(root.matches("/x"), None);
        let hello = PathTemplate::parse("hello").unwrap();
        assert_eq!(hello.to_string(), "/hello");
        assert_eq!(hello.matches("/hello"), Some(vec![]));
        assert_eq!(hello.matches("/"), None);
    }

    #[test]
    fn bad_templates_are_refused() {
        for bad in ["/a/{", "/a/{}", "/a/x{id}", "/{a}/{a}", "/{a b}"] {
            assert!(PathTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes_and_specificity() {
        let a = PathTemplate::parse("/a/{x}").unwrap();
        let b = PathTemplate::parse("/a/{y}").unwrap();
        let c = PathTemplate::parse("/a/b").unwrap();
        assert!(a.same_shape(&b));
        assert!(!a.same_shape(&c));
        assert!(c.param_count() < a.param_count());
    }

    #[test]
    fn dot_segments_in_any_spelling() {
        for bad in [
            "/a/../b",
            "/..",
            "/a/.",
            "/a/%2e%2e/b",
            "/a/%2E./b",
            "/a/.%2e",
            "/a/..%2fb",
            "/a/..\\b",
            "..",
            "%2e",
            "/p/..;",
            "/p/%2e%2e;x/admin",
            "/p/.;jsessionid=1",
        ] {
            assert!(has_dot_segment(bad), "{bad}");
        }
        for good in [
            "/a/b",
            "/a/...",
            "/a/.b",
            "/a/b.",
            "/v1.2/x",
            "/a/%252e%252e",
            "/a/b;v=1",
            "/a/...;x",
            "",
        ] {
            assert!(!has_dot_segment(good), "{good}");
        }
    }

    #[test]
    fn query_pairs_decode() {
        let q: Vec<_> = query_pairs("a=1&b=x+y&c=%2F&flag").collect();
        assert_eq!(
            q,
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "x y".into()),
                ("c".into(), "/".into()),
                ("flag".into(), "".into()),
            ]
        );
    }
}
