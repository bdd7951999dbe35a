//! The XML a message carries: its text, checked against the bounds, and parsed.

use camel_api::{Body, CamelError, Exchange, Value};
use xee_xpath::{DocumentHandle, Documents};

/// The most bytes of XML one evaluation parses. The engine's cost grows faster than the
/// size (measured on a debug build: 1 MiB of flat elements took 10.7 s for `count(//a)`,
/// a quarter of it 2.1 s), so the bound is kept to what a message usually is.
pub const MAX_XML_BYTES: usize = 1024 * 1024;
/// The deepest nesting of elements accepted.
pub const MAX_DEPTH: usize = 256;

/// Why a message's XML could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum XmlError {
    /// There is nothing to read.
    #[error("there is no XML: the {0} is empty")]
    Empty(&'static str),
    /// The bytes are not UTF-8 text.
    #[error("the {0} is not UTF-8 text")]
    NotText(&'static str),
    /// A JSON body.
    #[error("the {0} is JSON, not XML")]
    Json(&'static str),
    /// More than [`MAX_XML_BYTES`].
    #[error("the XML is {0} bytes, more than the {MAX_XML_BYTES} allowed")]
    TooLarge(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("the XML nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Not well-formed, or it names a DTD or entity that is not loaded.
    #[error("the XML does not parse: {0}")]
    Parse(String),
}

impl From<XmlError> for CamelError {
    fn from(error: XmlError) -> Self {
        CamelError::external("xml", error)
    }
}

/// Where an XPath reads its document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Body,
    Header(String),
    Property(String),
    Variable(String),
}

impl Source {
    fn what(&self) -> &'static str {
        match self {
            Source::Body => "body",
            Source::Header(_) => "header",
            Source::Property(_) => "exchange property",
            Source::Variable(_) => "variable",
        }
    }

    /// The XML text at this source of `exchange`.
    pub(crate) fn text(&self, exchange: &Exchange) -> Result<String, XmlError> {
        let what = self.what();
        let value = match self {
            Source::Body => return body_text(&exchange.message.body),
            Source::Header(name) => exchange.header(name).cloned(),
            Source::Property(name) => exchange.property(name).cloned(),
            Source::Variable(name) => exchange.variable(name).cloned(),
        };
        match value {
            None | Some(Value::Null) => Err(XmlError::Empty(what)),
            Some(Value::Bytes(b)) => {
                bounded(String::from_utf8(b.to_vec()).map_err(|_| XmlError::NotText(what))?)
            }
            Some(Value::Json(_)) => Err(XmlError::Json(what)),
            Some(other) => bounded(other.to_string()),
        }
    }
}

/// The text of a body holding XML.
pub(crate) fn body_text(body: &Body) -> Result<String, XmlError> {
    match body {
        Body::Empty => Err(XmlError::Empty("body")),
        Body::Json(_) => Err(XmlError::Json("body")),
        Body::Bytes(b) => {
            if b.len() > MAX_XML_BYTES {
                return Err(XmlError::TooLarge(b.len()));
            }
            String::from_utf8(b.to_vec()).map_err(|_| XmlError::NotText("body"))
        }
        Body::Text(t) => bounded(t.to_string()),
    }
}

fn bounded(text: String) -> Result<String, XmlError> {
    if text.len() > MAX_XML_BYTES {
        return Err(XmlError::TooLarge(text.len()));
    }
    Ok(text)
}

/// Parses `xml` into `documents`, refusing a DTD (entities are where the XML bombs are)
/// and a nesting deeper than [`MAX_DEPTH`].
pub(crate) fn parse(documents: &mut Documents, xml: &str) -> Result<DocumentHandle, XmlError> {
    precheck(xml)?;
    let handle = documents
        .add_string_without_uri(xml)
        .map_err(|e| XmlError::Parse(e.to_string()))?;
    let root = documents
        .document_node(handle)
        .ok_or_else(|| XmlError::Parse("the document was not kept".into()))?;
    check_depth(documents.xot(), root)?;
    Ok(handle)
}

/// The checks made on the text before it is parsed: no DOCTYPE, and no element nested
/// deeper than [`MAX_DEPTH`]. The depth must be known before the parser runs: its cost
/// grows with the depth of every element (a 1.4 MB document 200,000 levels deep kept a
/// core busy for minutes).
pub(crate) fn precheck(xml: &str) -> Result<(), XmlError> {
    if has_doctype(xml) {
        return Err(XmlError::Parse(
            "a DOCTYPE is not accepted (no DTD or entity is loaded)".into(),
        ));
    }
    if nesting_exceeds(xml.as_bytes(), MAX_DEPTH) {
        return Err(XmlError::TooDeep);
    }
    Ok(())
}

/// Whether elements nest deeper than `limit`, read in one pass over the bytes: comments,
/// CDATA sections, processing instructions and declarations are skipped, quoted
/// attribute values may hold `>`, and `<x/>` opens nothing. Malformed text is left to the
/// parser to refuse.
fn nesting_exceeds(xml: &[u8], limit: usize) -> bool {
    let find = |from: usize, needle: &[u8]| {
        xml.get(from..)
            .and_then(|rest| rest.windows(needle.len()).position(|w| w == needle))
            .map(|at| from + at + needle.len())
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(lt) = xml
        .get(i..)
        .and_then(|rest| rest.iter().position(|&b| b == b'<'))
    {
        let at = i + lt;
        let rest = &xml[at..];
        let next = if rest.starts_with(b"<!--") {
            find(at + 4, b"-->")
        } else if rest.starts_with(b"<![CDATA[") {
            find(at + 9, b"]]>")
        } else if rest.starts_with(b"<?") {
            find(at + 2, b"?>")
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") {
            if rest.starts_with(b"</") {
                depth = depth.saturating_sub(1);
            }
            find(at + 1, b">")
        } else {
            // A start tag: to its `>`, outside quotes.
            let mut quote = None;
            let mut end = None;
            for (k, &b) in xml[at + 1..].iter().enumerate() {
                match (quote, b) {
                    (Some(q), _) if b == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'"' | b'\'') => quote = Some(b),
                    (None, b'>') => {
                        end = Some(at + 1 + k);
                        break;
                    }
                    _ => {}
                }
            }
            match end {
                Some(end) => {
                    if xml[end - 1] != b'/' {
                        depth += 1;
                        if depth > limit {
                            return true;
                        }
                    }
                    Some(end + 1)
                }
                None => None,
            }
        };
        match next {
            Some(next) => i = next,
            None => return false,
        }
    }
    false
}

/// Fails when an element of the tree under `root` is nested deeper than [`MAX_DEPTH`].
/// The walk is the arena's own iterator, so the check itself cannot recurse.
pub(crate) fn check_depth(xot: &xot::Xot, root: xot::Node) -> Result<(), XmlError> {
    let mut depth = 0usize;
    for edge in xot.traverse(root) {
        match edge {
            xot::NodeEdge::Start(node) if xot.is_element(node) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(XmlError::TooDeep);
                }
            }
            xot::NodeEdge::End(node) if xot.is_element(node) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Whether the prolog declares a document type.
pub(crate) fn has_doctype(xml: &str) -> bool {
    // The prolog ends at the first element; a DOCTYPE can only come before it.
    let prolog_end = xml
        .match_indices('<')
        .find(|(i, _)| {
            let rest = &xml[i + 1..];
            !(rest.starts_with('?') || rest.starts_with('!'))
        })
        .map_or(xml.len(), |(i, _)| i);
    xml[..prolog_end].contains("<!DOCTYPE")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_before_the_parse() {
        assert!(!nesting_exceeds(b"<a><b/><c x='>'><d/></c></a>", 2));
        assert!(nesting_exceeds(b"<a><b><c/></b></a>", 1));
        assert!(!nesting_exceeds(
            b"<a><!-- <b><c> --><![CDATA[<x><y>]]><?p <q>?></a>",
            1
        ));
        assert!(!nesting_exceeds(b"<a b=\"x>y\"><c/></a>", 1));
        assert!(!nesting_exceeds(b"<a><b></b><b></b></a>", 2));
        assert!(!nesting_exceeds(b"<a", 0));
    }

    #[test]
    fn bounds_and_doctype() {
        let mut documents = Documents::new();
        assert!(parse(&mut documents, "<a><b/></a>").is_ok());
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&mut documents, &deep), Err(XmlError::TooDeep));
        // Far deeper than the bound: the parse and the check hold on a test thread's stack.
        let abyss = "<a>".repeat(200_000) + &"</a>".repeat(200_000);
        assert_eq!(parse(&mut documents, &abyss), Err(XmlError::TooDeep));
        let fine = "<a>".repeat(MAX_DEPTH) + &"</a>".repeat(MAX_DEPTH);
        assert!(parse(&mut documents, &fine).is_ok());
        let bomb =
            r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><lolz>&lol;</lolz>"#;
        assert!(
            matches!(parse(&mut documents, bomb), Err(XmlError::Parse(m)) if m.contains("DOCTYPE"))
        );
        // A DOCTYPE-looking text inside the document is only text.
        assert!(!has_doctype("<a><![CDATA[<!DOCTYPE x>]]></a>"));
        assert!(matches!(
            parse(&mut documents, "<a>"),
            Err(XmlError::Parse(_))
        ));
        assert_eq!(body_text(&Body::Empty), Err(XmlError::Empty("body")));
        assert_eq!(
            body_text(&Body::from(vec![0xff, 0xfe])),
            Err(XmlError::NotText("body"))
        );
    }
}
