//! Conditions written inside the braces: `${header.n > 3}` (a boolean) and the ternary
//! `${header.n > 3 ? 'big' : 'small'}`.
//!
//! Inside the braces an operand is a function name without its own `${}` (`header.n`),
//! a quoted text, a number, `true`, `false`, `null` or a nested `${…}`. The condition is
//! rewritten to the outside form (`${header.n} > 3`) and compiled by the same parser,
//! with problem positions mapped back to the original text.

use camel_api::{CamelError, Exchange, Value};

use super::super::compare::parse_number;
use super::super::parser::{self, is_operator, Mode};
use super::args::{self, Arg, Nested, Span};
use crate::problem::Problem;

/// A condition inside the braces, with the ternary's two values when there are some.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inline {
    condition: Nested,
    branches: Option<(Arg, Arg)>,
}

/// A top-level word of the content: outside quotes, parentheses and nested `${}`.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    at: usize,
}

fn words(content: &str, at: usize) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let bytes = content.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut start: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        let space = quote.is_none() && depth == 0 && b.is_ascii_whitespace();
        if space {
            if let Some(s) = start.take() {
                out.push(Word {
                    text: &content[s..i],
                    at: at + s,
                });
            }
            continue;
        }
        start.get_or_insert(i);
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' if start == Some(i) => quote = Some(b),
                b'(' | b'{' => depth += 1,
                b')' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    if let Some(s) = start {
        out.push(Word {
            text: &content[s..],
            at: at + s,
        });
    }
    out
}

/// Resolves `content` (at byte `at`) when it holds an operator or a ternary at its top
/// level; `Ok(None)` otherwise.
pub(crate) fn parse(content: &str, at: usize) -> Result<Option<Inline>, Problem> {
    let words = words(content, at);
    let question = words.iter().position(|w| w.text == "?");
    let has_operator = words.iter().any(|w| is_operator(w.text));
    if question.is_none() && !has_operator {
        return Ok(None);
    }
    let (condition_words, branches) = match question {
        None => (&words[..], None),
        Some(q) => {
            let colon = words[q + 1..]
                .iter()
                .position(|w| w.text == ":")
                .map(|c| q + 1 + c)
                .ok_or_else(|| Problem::new(words[q].at, "missing ` : ` after `?`"))?;
            let yes = branch(&words[q + 1..colon], words[q].at + 1)?;
            let no = branch(&words[colon + 1..], words[colon].at + 1)?;
            (&words[..q], Some((yes, no)))
        }
    };
    let Some(first) = condition_words.first() else {
        return Err(Problem::new(at, "missing condition before `?`"));
    };
    Ok(Some(Inline {
        condition: condition(condition_words, first.at)?,
        branches,
    }))
}

/// One value of a ternary: a quoted text, a number, `true`, `false`, `null`, or a
/// nested `${…}`.
fn branch(words: &[Word<'_>], at: usize) -> Result<Arg, Problem> {
    let [word] = words else {
        return Err(Problem::new(
            words.get(1).map_or(at, |w| w.at),
            "a ternary value must be one quoted text, number, true, false, null or ${…}",
        ));
    };
    Ok(match word.text {
        "null" => Arg::Literal(Value::Null),
        "true" => Arg::Literal(Value::Bool(true)),
        "false" => Arg::Literal(Value::Bool(false)),
        t => match parse_number(t) {
            Some(n) => Arg::Literal(n),
            None => args::parse(
                Span {
                    text: t,
                    at: word.at,
                },
                Mode::Expression,
            )?,
        },
    })
}

fn is_plain_operand(word: &str) -> bool {
    word.starts_with(['\'', '"'])
        || word.starts_with("${")
        || matches!(word, "true" | "false" | "null")
        || parse_number(word).is_some()
}

/// Rewrites the words to the outside form and compiles them as a predicate.
fn condition(words: &[Word<'_>], at: usize) -> Result<Nested, Problem> {
    let mut text = String::new();
    // (offset in `text`, offset in the source, whether `${` was added before it)
    let mut map: Vec<(usize, usize, bool)> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        let wrap = !is_operator(w.text) && !is_plain_operand(w.text);
        map.push((text.len(), w.at, wrap));
        if wrap {
            text.push_str("${");
            text.push_str(w.text);
            text.push('}');
        } else {
            text.push_str(w.text);
        }
    }
    let node = parser::parse(&text, Mode::Predicate).map_err(|p| {
        let (start, source, wrapped) = map
            .iter()
            .rev()
            .find(|(start, _, _)| *start <= p.at)
            .copied()
            .unwrap_or((0, at, false));
        let shift = if wrapped { 2 } else { 0 };
        Problem::new(source + (p.at - start).saturating_sub(shift), p.message)
    })?;
    Ok(Nested::from_node(&text, Mode::Predicate, node))
}

impl Inline {
    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let holds = self.condition.holds(exchange)?;
        match &self.branches {
            None => Ok(Value::Bool(holds)),
            Some((yes, _)) if holds => yes.value(exchange),
            Some((_, no)) => no.value(exchange),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_respect_quotes_and_nesting() {
        let w: Vec<&str> = words("a == 'x y' ? ${iif(a, b, c)} : 1", 0)
            .iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(w, ["a", "==", "'x y'", "?", "${iif(a, b, c)}", ":", "1"]);
    }

    #[test]
    fn plain_functions_are_not_conditions() {
        assert!(parse("header.x", 0).unwrap().is_none());
        assert!(parse("date:now:hh:mm a", 0).unwrap().is_none());
    }

    #[test]
    fn problems_point_into_the_original_text() {
        // `${` starts at 0, the content at 2: `header.n > ` misses its right operand.
        let p = parse("header.n >", 2).unwrap_err();
        assert_eq!(p.at, 12);
        let p = parse("hedaer.n > 1", 2).unwrap_err();
        assert_eq!(p.at, 2);
        let p = parse("header.n > 1 ? 'a'", 2).unwrap_err();
        assert_eq!(p.at, 15);
    }
}
