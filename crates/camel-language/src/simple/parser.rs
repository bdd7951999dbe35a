//! Turns tokens into a [`Node`]: a value (text template, function, literal) or a
//! condition (comparisons joined by `&&` / `||`).
//!
//! Operators are words surrounded by whitespace, so `<order>${body}</order>` stays a
//! template. When the text is compiled as an *expression* it only becomes a condition
//! if every operand is a function, a quoted literal or a number / boolean / null, so
//! prose such as `Log in ${body}` stays text; as a *predicate* any operator counts.

use std::ops::Range;
use std::sync::Arc;

use camel_api::Value;

use super::ast::{self, CompareOp, Condition, List, Node, Operand, Pattern, Template};
use super::compare::parse_number;
use super::lexer::{lex, Token, TokenKind};
use crate::problem::{column_of, Problem};

/// Whether the text is compiled as an expression or as a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Expression,
    Predicate,
}

/// An operator found in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Binary(Binary),
    And,
    Or,
}

/// An operator between two operands of one condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binary {
    Compare(CompareOp),
    Regex { negate: bool },
    In { negate: bool },
}

impl Operator {
    fn from_word(word: &str) -> Option<Operator> {
        use CompareOp::*;
        let compare = |op| Operator::Binary(Binary::Compare(op));
        Some(match word {
            "==" => compare(Eq),
            "!=" => compare(Ne),
            "<" => compare(Lt),
            "<=" => compare(Le),
            ">" => compare(Gt),
            ">=" => compare(Ge),
            "=~" => compare(EqIgnoreCase),
            "!=~" => compare(NeIgnoreCase),
            "contains" => compare(Contains),
            "!contains" => compare(NotContains),
            "~~" => compare(ContainsIgnoreCase),
            "!~~" => compare(NotContainsIgnoreCase),
            "startsWith" | "starts_with" => compare(StartsWith),
            "!startsWith" | "!starts_with" => compare(NotStartsWith),
            "endsWith" | "ends_with" => compare(EndsWith),
            "!endsWith" | "!ends_with" => compare(NotEndsWith),
            "regex" => Operator::Binary(Binary::Regex { negate: false }),
            "!regex" => Operator::Binary(Binary::Regex { negate: true }),
            "in" => Operator::Binary(Binary::In { negate: false }),
            "!in" => Operator::Binary(Binary::In { negate: true }),
            "&&" | "and" => Operator::And,
            "||" | "or" => Operator::Or,
            _ => return None,
        })
    }

    /// The negated form, for `not contains` and friends.
    fn negated(self) -> Option<Operator> {
        use CompareOp::*;
        let Operator::Binary(binary) = self else {
            return None;
        };
        let negated = match binary {
            Binary::Compare(Contains) => Binary::Compare(NotContains),
            Binary::Compare(ContainsIgnoreCase) => Binary::Compare(NotContainsIgnoreCase),
            Binary::Compare(StartsWith) => Binary::Compare(NotStartsWith),
            Binary::Compare(EndsWith) => Binary::Compare(NotEndsWith),
            Binary::Regex { negate: false } => Binary::Regex { negate: true },
            Binary::In { negate: false } => Binary::In { negate: true },
            _ => return None,
        };
        Some(Operator::Binary(negated))
    }

    fn is_binary(self) -> bool {
        matches!(self, Operator::Binary(_))
    }
}

/// True for a word that is an operator (`==`, `contains`, `&&`, …) or `not`.
pub(crate) fn is_operator(word: &str) -> bool {
    word == "not" || Operator::from_word(word).is_some()
}

/// An operator with the byte span of its spelling.
#[derive(Debug, Clone)]
struct Found {
    operator: Operator,
    start: usize,
    end: usize,
}

/// The text split at its operators: `slots[i]` is the token range before `ops[i]`.
#[derive(Debug)]
struct Split {
    slots: Vec<Range<usize>>,
    ops: Vec<Found>,
}

/// Parses `text` in the given mode.
pub(crate) fn parse(text: &str, mode: Mode) -> Result<Node, Problem> {
    let lexed = lex(text)?;
    let tokens = &lexed.tokens;
    if mode == Mode::Predicate {
        refuse_unsupported_operators(text, tokens)?;
    }
    let split = split(text, tokens);
    let is_condition = !split.ops.is_empty()
        && (mode == Mode::Predicate || looks_like_condition(text, tokens, &split));
    if !is_condition {
        return Ok(Node::Value(template(text, tokens)));
    }
    if let Some(at) = lexed.unclosed_quote {
        return Err(Problem::new(at, "unterminated quote"));
    }
    conditions(text, tokens, &split)
}

/// Camel operators this language does not implement. In a predicate they would
/// otherwise be read as text and the predicate silently be false.
const UNSUPPORTED_OPERATORS: &[&str] = &[
    "is", "!is", "range", "!range", "equals", "!equals", "?:", "~>", "?~>",
];

fn refuse_unsupported_operators(text: &str, tokens: &[Token]) -> Result<(), Problem> {
    if !tokens
        .iter()
        .any(|t| matches!(t.kind, TokenKind::Function(_)))
    {
        return Ok(());
    }
    for (i, token) in tokens.iter().enumerate() {
        let word = &text[token.start..token.end];
        if is_bounded(tokens, i) && UNSUPPORTED_OPERATORS.contains(&word) {
            return Err(Problem::new(
                token.start,
                format!("the operator `{word}` is not supported (see docs/compatibility.md)"),
            ));
        }
    }
    Ok(())
}

/// For an expression: operators with at least one operand, and every operand typed.
/// A lone `<` or `and` is text, and so is prose around an operator word.
fn looks_like_condition(text: &str, tokens: &[Token], split: &Split) -> bool {
    let mut operands = split
        .slots
        .iter()
        .filter(|slot| !slot.is_empty())
        .peekable();
    operands.peek().is_some() && operands.all(|slot| is_typed_operand(text, &tokens[slot.clone()]))
}

fn is_bounded(tokens: &[Token], i: usize) -> bool {
    let space = |t: Option<&Token>| t.is_none_or(|t| t.kind == TokenKind::Space);
    tokens[i].kind == TokenKind::Word
        && space(i.checked_sub(1).and_then(|p| tokens.get(p)))
        && space(tokens.get(i + 1))
}

fn split(text: &str, tokens: &[Token]) -> Split {
    let word = |i: usize| &text[tokens[i].start..tokens[i].end];
    let mut slots = Vec::new();
    let mut ops = Vec::new();
    let mut slot_start = 0;
    let mut i = 0;
    while i < tokens.len() {
        // The operator whose spelling starts at token `j`, and its last token: one word,
        // or Camel's two-word `starts with` / `ends with` (`!starts with` too).
        let operator_at = |j: usize| -> Option<(Operator, usize)> {
            if j + 2 < tokens.len() && is_bounded(tokens, j + 2) && word(j + 2) == "with" {
                let joined = match word(j) {
                    "starts" => "startsWith",
                    "!starts" => "!startsWith",
                    "ends" => "endsWith",
                    "!ends" => "!endsWith",
                    _ => "",
                };
                if let Some(op) = Operator::from_word(joined) {
                    return Some((op, j + 2));
                }
            }
            Operator::from_word(word(j)).map(|op| (op, j))
        };
        let mut found = None;
        if is_bounded(tokens, i) {
            if word(i) == "not" && i + 2 < tokens.len() && is_bounded(tokens, i + 2) {
                if let Some((op, last)) = operator_at(i + 2) {
                    found = op.negated().map(|op| (op, last));
                }
            }
            if found.is_none() {
                found = operator_at(i);
            }
        }
        match found {
            Some((operator, last)) => {
                slots.push(trim(tokens, slot_start..i));
                ops.push(Found {
                    operator,
                    start: tokens[i].start,
                    end: tokens[last].end,
                });
                i = last + 1;
                slot_start = i;
            }
            None => i += 1,
        }
    }
    slots.push(trim(tokens, slot_start..tokens.len()));
    Split { slots, ops }
}

/// Drops whitespace tokens at both ends of a range.
fn trim(tokens: &[Token], mut range: Range<usize>) -> Range<usize> {
    while range.start < range.end && tokens[range.start].kind == TokenKind::Space {
        range.start += 1;
    }
    while range.end > range.start && tokens[range.end - 1].kind == TokenKind::Space {
        range.end -= 1;
    }
    range
}

/// True for a single function, quoted literal, number, boolean or null — or an unclosed
/// quote, so that the mistake is reported rather than the text silently kept.
fn is_typed_operand(text: &str, tokens: &[Token]) -> bool {
    match tokens {
        [token] => match &token.kind {
            TokenKind::Function(_) | TokenKind::Quoted(_) => true,
            TokenKind::Word => {
                let word = &text[token.start..token.end];
                word.starts_with(['\'', '"']) || !matches!(literal(word), Value::Text(_))
            }
            TokenKind::Space => false,
        },
        _ => false,
    }
}

/// A bare word as a literal: a number, `true`, `false`, `null`, or else text.
fn literal(word: &str) -> Value {
    match word {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => parse_number(word).unwrap_or_else(|| Value::Text(word.into())),
    }
}

/// Builds the operand for a token range: one function or literal keeps its type;
/// anything longer is a text template of the raw text. A quoted literal with functions
/// inside (`'${header.x}'`, `'order-${header.id}'`) has them filled in, as Camel does.
fn operand(text: &str, tokens: &[Token]) -> Operand {
    match tokens {
        [Token {
            kind: TokenKind::Quoted(q),
            ..
        }] if q.contains("${") => quoted_template(q),
        [Token {
            kind: TokenKind::Quoted(q),
            ..
        }] => Operand::Literal(Value::Text((&**q).into())),
        [token @ Token {
            kind: TokenKind::Word,
            ..
        }] => Operand::Literal(literal(&text[token.start..token.end])),
        _ => template(text, tokens),
    }
}

/// The raw text of `tokens` with their functions: text, a lone function, or a template.
fn template(text: &str, tokens: &[Token]) -> Operand {
    let mut template = Template::builder();
    add_tokens(&mut template, text, tokens);
    template.finish()
}

/// Adds `tokens` to a template. In a template quotes are text, so a quoted part with
/// functions inside (`{"id": "${header.id}"}`) has them filled in, as Camel does.
fn add_tokens(template: &mut ast::TemplateBuilder, text: &str, tokens: &[Token]) {
    for token in tokens {
        match &token.kind {
            TokenKind::Function(f) => template.function(f.clone()),
            TokenKind::Quoted(inner) if inner.contains("${") => match lex(inner) {
                Ok(lexed) => {
                    let quote = &text[token.start..token.start + 1];
                    template.text(quote);
                    add_tokens(template, inner, &lexed.tokens);
                    template.text(quote);
                }
                Err(_) => template.text(&text[token.start..token.end]),
            },
            _ => template.text(&text[token.start..token.end]),
        }
    }
}

/// The inside of a quoted text with its functions filled in: a template (text, never a
/// condition), or the text as written when a function in it does not parse, as in a
/// template.
pub(crate) fn quoted_template(inner: &str) -> Operand {
    match lex(inner) {
        Ok(lexed) => {
            let mut template = Template::builder();
            add_tokens(&mut template, inner, &lexed.tokens);
            template.finish()
        }
        Err(_) => Operand::Literal(Value::Text(inner.into())),
    }
}

fn conditions(text: &str, tokens: &[Token], split: &Split) -> Result<Node, Problem> {
    let Split { slots, ops } = split;
    let spelling = |f: &Found| &text[f.start..f.end];
    let mut any = Vec::new();
    let mut all = Vec::new();
    let mut k = 0;
    loop {
        let left = &slots[k];
        let condition = match ops.get(k) {
            Some(
                op @ Found {
                    operator: Operator::Binary(binary_op),
                    ..
                },
            ) => {
                if left.is_empty() {
                    return Err(Problem::new(
                        op.start,
                        format!("missing left operand for `{}`", spelling(op)),
                    ));
                }
                let right = &slots[k + 1];
                if right.is_empty() {
                    return Err(Problem::new(
                        op.end,
                        format!("missing right operand for `{}`", spelling(op)),
                    ));
                }
                if let Some(next) = ops.get(k + 1).filter(|n| n.operator.is_binary()) {
                    return Err(Problem::new(
                        next.start,
                        format!(
                            "unexpected `{}` after a complete comparison; join comparisons with `&&` or `||`",
                            spelling(next)
                        ),
                    ));
                }
                let left = operand(text, &tokens[left.clone()]);
                let right_tokens = &tokens[right.clone()];
                let right_at = right_tokens.first().map_or(op.end, |t| t.start);
                let right = operand(text, right_tokens);
                k += 1;
                binary(text, left, *binary_op, right, right_at)?
            }
            next => {
                if left.is_empty() {
                    return Err(match next {
                        Some(op) => Problem::new(
                            op.start,
                            format!("missing operand before `{}`", spelling(op)),
                        ),
                        None => {
                            let prev = &ops[k - 1];
                            Problem::new(
                                prev.end,
                                format!("missing operand after `{}`", spelling(prev)),
                            )
                        }
                    });
                }
                Condition::Test(operand(text, &tokens[left.clone()]))
            }
        };
        all.push(condition);
        let Some(op) = ops.get(k) else { break };
        if op.operator == Operator::Or {
            any.push(std::mem::take(&mut all).into_boxed_slice());
        }
        k += 1;
    }
    any.push(all.into_boxed_slice());
    Ok(Node::Logic(any.into_boxed_slice()))
}

/// Builds one comparison, compiling a literal regex and splitting a literal list now.
fn binary(
    text: &str,
    left: Operand,
    operator: Binary,
    right: Operand,
    right_at: usize,
) -> Result<Condition, Problem> {
    Ok(match operator {
        Binary::Compare(op) => Condition::Compare { left, op, right },
        Binary::Regex { negate } => {
            let pattern = match right {
                Operand::Literal(value) => {
                    let source = value.to_string();
                    let regex = ast::whole_match_regex(&source).map_err(|e| {
                        Problem::new(right_at, format!("invalid regex `{source}`: {e}"))
                    })?;
                    Pattern::Fixed(regex)
                }
                dynamic => Pattern::Dynamic {
                    operand: dynamic,
                    expression: Arc::from(text),
                    column: column_of(text, right_at),
                },
            };
            Condition::Regex {
                left,
                pattern,
                negate,
            }
        }
        Binary::In { negate } => {
            let list = match right {
                Operand::Literal(value) => List::Fixed(ast::split_list(&value.to_string())),
                dynamic => List::Dynamic(dynamic),
            };
            Condition::In { left, list, negate }
        }
    })
}
