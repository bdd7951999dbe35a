//! Statement text: Camel's placeholders (`:#name` named, `#` positional) found outside
//! quotes, rendered as each database's own (`$1` on PostgreSQL, `?` elsewhere), and the
//! values for them taken from an exchange.

use camel_api::{Body, Exchange};
use serde_json::Value as Json;

pub(crate) use crate::arg::Arg;
use crate::error::SqlError;

/// One placeholder of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// `:#name`.
    Named(String),
    /// `#`.
    Positional,
    /// `:#${…}`: a simple-language expression, by its index in `Statement::expressions`.
    Expression(usize),
}

/// A parsed statement: text pieces with placeholders between them.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    /// `pieces.len() == params.len() + 1`.
    pieces: Vec<String>,
    pub(crate) params: Vec<Param>,
    /// The text of each `:#${…}` and, once [`Statement::compile`] ran, its expression.
    expressions: Vec<(String, Option<camel_api::BoxExpression>)>,
    /// True when the statement reads rows (decides between a row count and an update
    /// count when no row came back).
    pub(crate) is_query: bool,
}

impl Statement {
    /// Parses `text`. Written URI-style (no whitespace at all), `+` stands for a space,
    /// as in Camel's endpoint URIs.
    pub(crate) fn parse(text: &str) -> Statement {
        let owned;
        let text = if !text.trim().chars().any(char::is_whitespace) && text.contains('+') {
            owned = text.replace('+', " ");
            owned.as_str()
        } else {
            text
        };
        let text = text.trim();
        let mut pieces = vec![String::new()];
        let mut params = Vec::new();
        let mut expressions = Vec::new();
        let mut quote: Option<char> = None;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let current = pieces.last_mut().expect("pieces is never empty");
            match quote {
                Some(q) => {
                    current.push(c);
                    if c == q {
                        quote = None;
                    }
                }
                None if c == '\'' || c == '"' || c == '`' => {
                    quote = Some(c);
                    current.push(c);
                }
                None if c == ':' && chars.peek() == Some(&'#') => {
                    chars.next();
                    if chars.peek() == Some(&'$') {
                        // `:#${…}` up to the matching brace.
                        let mut text = String::new();
                        let mut depth = 0usize;
                        for n in chars.by_ref() {
                            text.push(n);
                            match n {
                                '{' => depth += 1,
                                '}' => {
                                    depth = depth.saturating_sub(1);
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                        params.push(Param::Expression(expressions.len()));
                        expressions.push((text, None));
                        pieces.push(String::new());
                        continue;
                    }
                    let mut name = String::new();
                    while let Some(&n) = chars.peek() {
                        if n.is_alphanumeric() || n == '_' || n == '.' || n == '$' {
                            name.push(n);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    params.push(Param::Named(name));
                    pieces.push(String::new());
                }
                None if c == '#' => {
                    params.push(Param::Positional);
                    pieces.push(String::new());
                }
                None => current.push(c),
            }
        }
        let first = text
            .trim_start_matches('(')
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let is_query = matches!(
            first.as_str(),
            "select" | "with" | "show" | "values" | "pragma" | "explain" | "describe" | "table"
        ) || text
            .split_whitespace()
            .any(|w| w.eq_ignore_ascii_case("returning"));
        Statement {
            pieces,
            params,
            expressions,
            is_query,
        }
    }

    /// The names of the named parameters (an empty name is a typo worth reporting).
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().filter_map(|p| match p {
            Param::Named(n) => Some(n.as_str()),
            _ => None,
        })
    }

    /// Compiles the `:#${…}` expressions with `compile` (the context's simple language).
    pub(crate) fn compile<E>(
        &mut self,
        mut compile: impl FnMut(&str) -> Result<camel_api::BoxExpression, E>,
    ) -> Result<(), E> {
        for (text, compiled) in &mut self.expressions {
            *compiled = Some(compile(text)?);
        }
        Ok(())
    }

    /// The text with `?` placeholders (SQLite, MySQL).
    pub(crate) fn question_marks(&self) -> String {
        self.render(|_| "?".to_string())
    }

    /// The text with `$n` placeholders (PostgreSQL); placeholders whose index is in
    /// `cast` become `CAST($n::text AS type)`, for types the component sends as text.
    pub(crate) fn dollars(&self, cast: &[Option<String>]) -> String {
        self.render(|i| match cast.get(i).and_then(Option::as_ref) {
            Some(ty) => format!("CAST(${}::text AS {ty})", i + 1),
            None => format!("${}", i + 1),
        })
    }

    fn render(&self, mut placeholder: impl FnMut(usize) -> String) -> String {
        let mut out = String::new();
        for (i, piece) in self.pieces.iter().enumerate() {
            out.push_str(piece);
            if i < self.params.len() {
                out.push_str(&placeholder(i));
            }
        }
        out
    }

    /// The values for the placeholders from `exchange`: a named one from the header of
    /// that name, else the body's field; positional ones from the body in order (a JSON
    /// list, or text split at `separator`, or the body itself for a single one).
    pub(crate) fn args(&self, exchange: &Exchange, separator: char) -> Result<Vec<Arg>, SqlError> {
        let body = body_json(&exchange.message.body);
        self.resolve(exchange, body.as_ref(), separator, false)
    }

    /// Like [`Statement::args`] with `body` standing for the message body (a `batch` entry).
    pub(crate) fn args_from(
        &self,
        exchange: &Exchange,
        body: Option<&Json>,
        separator: char,
    ) -> Result<Vec<Arg>, SqlError> {
        self.resolve(exchange, body, separator, true)
    }

    fn resolve(
        &self,
        exchange: &Exchange,
        body: Option<&Json>,
        separator: char,
        is_entry: bool,
    ) -> Result<Vec<Arg>, SqlError> {
        let mut positional: Option<Vec<Arg>> = None;
        let mut entry: Option<Exchange> = None;
        let mut next = 0;
        let mut out = Vec::with_capacity(self.params.len());
        for param in &self.params {
            match param {
                Param::Named(name) => {
                    if let Some(v) = exchange.message.headers.get(name) {
                        out.push(Arg::from_value(v));
                    } else if let Some(v) = body.and_then(|b| field(b, name)) {
                        out.push(Arg::from_json(v));
                    } else {
                        return Err(SqlError::UnknownParameter { name: name.clone() });
                    }
                }
                Param::Expression(i) => {
                    let (text, compiled) = &self.expressions[*i];
                    let Some(expression) = compiled else {
                        return Err(SqlError::Expression {
                            expression: text.clone(),
                            message:
                                "expressions are evaluated only in the endpoint's own statement"
                                    .into(),
                        });
                    };
                    // A batch entry is the body the expression sees.
                    let target = match (is_entry, body) {
                        (true, Some(b)) => &*entry.get_or_insert_with(|| {
                            let mut e = exchange.clone();
                            e.message.body = Body::Json(std::sync::Arc::new(b.clone()));
                            e
                        }),
                        _ => exchange,
                    };
                    let value = expression
                        .evaluate(target)
                        .map_err(|e| SqlError::Expression {
                            expression: text.clone(),
                            message: e.to_string(),
                        })?;
                    out.push(Arg::from_value(&value));
                }
                Param::Positional => {
                    let values = positional
                        .get_or_insert_with(|| positional_values(exchange, body, separator));
                    let expected = self
                        .params
                        .iter()
                        .filter(|p| **p == Param::Positional)
                        .count();
                    let v = values.get(next).ok_or(SqlError::MissingPositional {
                        expected,
                        given: values.len(),
                    })?;
                    out.push(v.clone());
                    next += 1;
                }
            }
        }
        Ok(out)
    }
}

/// A field of a JSON object; `a.b` walks nested objects.
fn field<'a>(body: &'a Json, name: &str) -> Option<&'a Json> {
    if let Some(v) = body.as_object().and_then(|o| o.get(name)) {
        return Some(v);
    }
    name.split('.')
        .try_fold(body, |v, part| v.as_object()?.get(part))
}

fn positional_values(exchange: &Exchange, body: Option<&Json>, separator: char) -> Vec<Arg> {
    match body {
        Some(Json::Array(items)) => items.iter().map(Arg::from_json).collect(),
        Some(Json::String(s)) => s
            .split(separator)
            .map(|p| Arg::Text(p.trim().to_string()))
            .collect(),
        Some(other) => vec![Arg::from_json(other)],
        None => match &exchange.message.body {
            Body::Empty => Vec::new(),
            b => vec![Arg::from_value(&b.to_value())],
        },
    }
}

/// The body as JSON when it is JSON, or text that parses as JSON; other text as a string.
pub(crate) fn body_json(body: &Body) -> Option<Json> {
    match body {
        Body::Json(j) => Some((**j).clone()),
        Body::Empty => None,
        Body::Text(t) => {
            Some(serde_json::from_str(t).unwrap_or_else(|_| Json::String(t.to_string())))
        }
        Body::Bytes(b) => match std::str::from_utf8(b) {
            Ok(t) => Some(serde_json::from_str(t).unwrap_or_else(|_| Json::String(t.to_string()))),
            Err(_) => None,
        },
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_quotes_are_found_and_rendered() {
        let s =
            Statement::parse("select * from t where a = :#a and b = '#:#x' and c = # and d = :#a");
        assert_eq!(
            s.params,
            vec![
                Param::Named("a".into()),
                Param::Positional,
                Param::Named("a".into())
            ]
        );
        assert_eq!(
            s.question_marks(),
            "select * from t where a = ? and b = '#:#x' and c = ? and d = ?"
        );
        assert_eq!(
            s.dollars(&[None, Some("NUMERIC".into()), None]),
            "select * from t where a = $1 and b = '#:#x' and c = CAST($2::text AS NUMERIC) and d = $3"
        );
        assert!(s.is_query);
        assert!(!Statement::parse("insert into t values (:#a)").is_query);
        assert!(Statement::parse("insert into t values (1) returning id").is_query);
        assert!(Statement::parse("delete from t\nRETURNING\tid").is_query);
    }

    #[test]
    fn expressions_are_parameters_up_to_their_matching_brace() {
        let s =
            Statement::parse("x = :#${header.a} and y = :#${body[k].replace('{','}')} and z = 1");
        assert_eq!(s.params, vec![Param::Expression(0), Param::Expression(1)]);
        assert_eq!(s.expressions[0].0, "${header.a}");
        assert_eq!(s.expressions[1].0, "${body[k].replace('{','}')}");
        assert_eq!(s.question_marks(), "x = ? and y = ? and z = 1");
        let ex = Exchange::new("");
        assert!(matches!(s.args(&ex, ','), Err(SqlError::Expression { .. })));
    }

    #[test]
    fn plus_is_a_space_only_in_uri_style_text() {
        assert_eq!(
            Statement::parse("select+*+from+t").question_marks(),
            "select * from t"
        );
        assert_eq!(
            Statement::parse("select a+b from t").question_marks(),
            "select a+b from t"
        );
    }

    #[test]
    fn values_come_from_headers_then_body_fields() {
        let s = Statement::parse("x :#a :#b :#c");
        let ex = Exchange::new(serde_json::json!({"a": 1, "b": "bee"})).with_header("a", "head");
        let args = s.args(&ex, ',');
        assert!(
            matches!(args, Err(SqlError::UnknownParameter { ref name }) if name == "c"),
            "{args:?}"
        );
        let s = Statement::parse("x :#a :#b");
        let args = s.args(&ex, ',').unwrap();
        assert_eq!(
            args,
            vec![Arg::Text("head".into()), Arg::Text("bee".into())]
        );
    }

    #[test]
    fn positional_values_come_from_the_body_in_order() {
        let s = Statement::parse("x # #");
        let ex = Exchange::new(serde_json::json!([1, "two"]));
        assert_eq!(
            s.args(&ex, ',').unwrap(),
            vec![Arg::Int(1), Arg::Text("two".into())]
        );
        let ex = Exchange::new("a, b");
        assert_eq!(
            s.args(&ex, ',').unwrap(),
            vec![Arg::Text("a".into()), Arg::Text("b".into())]
        );
        let ex = Exchange::new("only");
        assert!(matches!(
            s.args(&ex, ','),
            Err(SqlError::MissingPositional {
                expected: 2,
                given: 1
            })
        ));
    }
}
