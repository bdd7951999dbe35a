//! `simple` templates for endpoint URIs (`to_d`, a dynamic wire tap or enricher), where a
//! value taken from the message must never change the URI's shape.
//!
//! Spliced in raw, a header could add a path segment (`../etc`), a query (`?`), another
//! option (`&delete=true`), or text that the endpoint later compiles as an expression
//! (`${env.SECRET}`). Here each function's output is percent-encoded: every byte but
//! the unreserved ones (`A–Z a–z 0–9 - . _ ~`) becomes `%XX`, and a value that is
//! exactly `.` or `..` fails the exchange (URL parsers read `%2E%2E` as `..` as well),
//! so it cannot climb out of a folder. The
//! literal text of the template is the route author's and is kept as written.
//!
//! A template that is a single function (`${header.target}`) is the whole URI taken from
//! the message on purpose (as a recipient list is); it is not encoded.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::simple_uri;
//!
//! let uri = simple_uri("file:out/${header.region}?fileName=${header.id}.json").unwrap();
//! let ex = Exchange::new("").with_header("region", "../etc").with_header("id", "a&b=c");
//! assert_eq!(
//!     uri.evaluate(&ex).unwrap(),
//!     Value::from("file:out/..%2Fetc?fileName=a%26b%3Dc.json")
//! );
//! ```

use std::fmt;
use std::sync::Arc;

use camel_api::{BoxExpression, CamelError, Exchange, Expression, ExpressionError, Value};

use super::ast::{Node, Operand, PieceRef};
use super::function::Function;
use super::parser::{self, Mode};
use super::LANGUAGE;
use crate::problem::located;

/// Compiles a `simple` template for an endpoint URI: the values of its functions are
/// percent-encoded so that none can add a segment, a query or an option (see the module
/// docs). `simple_uri` of a text without functions is that text.
pub fn simple_uri(text: &str) -> Result<BoxExpression, ExpressionError> {
    let node = parser::parse(text, Mode::Expression).map_err(|p| p.into_error(LANGUAGE, text))?;
    let parts = match node {
        Node::Value(Operand::Literal(value)) => vec![Part::Text(value.to_string())],
        Node::Value(Operand::Function(function)) => vec![Part::Whole(function)],
        Node::Value(Operand::Template(template)) => template
            .pieces()
            .map(|piece| match piece {
                PieceRef::Text(t) => Part::Text(t.to_string()),
                PieceRef::Function(f) => Part::Encoded(f.clone()),
            })
            .collect(),
        Node::Logic(_) => {
            return Err(located(
                LANGUAGE,
                text,
                0,
                "an endpoint URI template cannot be a condition (an operator such as `==` \
                 or `>` stands outside `${…}`)",
            ))
        }
    };
    Ok(Arc::new(UriTemplate {
        text: text.into(),
        parts: parts.into_boxed_slice(),
    }))
}

enum Part {
    Text(String),
    /// A function inside literal text: its value is encoded.
    Encoded(Function),
    /// The template is this one function: the URI is its value as it is.
    Whole(Function),
}

struct UriTemplate {
    text: Arc<str>,
    parts: Box<[Part]>,
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "simple_uri({:?})", self.text)
    }
}

impl Expression for UriTemplate {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let mut out = String::with_capacity(self.text.len() + 16);
        let mut value = String::new();
        for part in self.parts.iter() {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Whole(f) => return Ok(f.value(exchange)?.into_owned()),
                Part::Encoded(f) => {
                    value.clear();
                    f.append_to(exchange, &mut value)?;
                    if value == "." || value == ".." {
                        // URL parsers read `%2E%2E` as `..` too, so no encoding of a dot
                        // segment is safe for every component: refuse it.
                        return Err(CamelError::invalid_uri(
                            self.text.clone(),
                            format!(
                                "a value spliced into the URI is `{value}`, a path step of its own"
                            ),
                        ));
                    }
                    encode_into(&value, &mut out);
                }
            }
        }
        Ok(Value::from(out))
    }
}

/// Appends `value` percent-encoded: only unreserved bytes stay.
pub(crate) fn encode_into(value: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in value.as_bytes() {
        let keep = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~' | b'.');
        if keep {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, ex: &Exchange) -> String {
        simple_uri(template)
            .unwrap()
            .evaluate(ex)
            .unwrap()
            .to_string()
    }

    #[test]
    fn values_cannot_add_segments_queries_options_or_expressions() {
        let ex = Exchange::new("")
            .with_header("dir", "..")
            .with_header("name", "x?delete=true&recursive=true")
            .with_header("secret", "${env.HOME}{{db.password}}")
            .with_header("sql", "1; DROP TABLE orders");
        let err = simple_uri("file:out/${header.dir}")
            .unwrap()
            .evaluate(&ex)
            .unwrap_err();
        assert!(err.to_string().contains("path step of its own"), "{err}");
        assert_eq!(
            render("file:out?fileName=${header.name}", &ex),
            "file:out?fileName=x%3Fdelete%3Dtrue%26recursive%3Dtrue"
        );
        assert_eq!(
            render("file:out/${header.secret}", &ex),
            "file:out/%24%7Benv.HOME%7D%7B%7Bdb.password%7D%7D"
        );
        assert_eq!(
            render("sql:select * from t where id = ${header.sql}", &ex),
            "sql:select * from t where id = 1%3B%20DROP%20TABLE%20orders"
        );
    }

    #[test]
    fn ordinary_values_and_literal_text_stay_as_written() {
        let ex = Exchange::new("").with_header("region", "eu-west_1.b");
        assert_eq!(
            render("file:out/${header.region}?fileName=a.json&x=1", &ex),
            "file:out/eu-west_1.b?fileName=a.json&x=1"
        );
        assert_eq!(render("log:fixed?level=INFO", &ex), "log:fixed?level=INFO");
        // Multi-byte text is encoded byte by byte, as URIs carry UTF-8.
        let ex = Exchange::new("").with_header("city", "Zürich");
        assert_eq!(
            render("file:out/${header.city}", &ex),
            "file:out/Z%C3%BCrich"
        );
    }

    #[test]
    fn a_lone_function_is_the_whole_uri() {
        let ex = Exchange::new("").with_header("to", "mock:a?retain=1");
        assert_eq!(render("${header.to}", &ex), "mock:a?retain=1");
    }

    #[test]
    fn a_condition_is_refused_with_its_place() {
        let err = simple_uri("${header.a} == 1").unwrap_err();
        assert!(err.to_string().contains("condition"), "{err}");
    }
}
