//! Properties of the simple language: the parser never panics, whatever the input;
//! a compiled expression never panics when evaluated; errors point inside the text;
//! numbers compare as numbers.

use camel_api::{Body, Exchange, Value};
use camel_language::{simple, simple_predicate};
use proptest::prelude::*;

/// Broken and partial pieces of the grammar. Together with the operands and operators
/// below, random sequences of them get deep into the parser instead of failing at the
/// first character.
const FRAGMENTS: &[&str] = &[
    "${",
    "}",
    "${header.",
    "${headers.",
    "${header[",
    "]",
    "header.",
    "body",
    "exchangeProperty.",
    "${in.body}",
    "${bodyAs(",
    "String)",
    "Integer)",
    "${null}",
    "not",
    "&&",
    "||",
    "and",
    "or",
    "'",
    "\"",
    "'(x'",
    "'.*'",
    "x",
    "é",
    " ",
    "  ",
    "\t",
    "$",
    "{",
    "(",
    ")",
    "[",
    "]",
    ",",
    "?",
    ":",
    "${date:",
    "${date-with-timezone:",
    "now",
    "header.n",
    "+1h",
    "GMT+é",
    "yyyy-MM-dd'T'HH",
    "${file:",
    "${substring(",
    "${substringBetween(",
    "${iif(",
    "${sum(",
    "${random(",
    "${split(",
    "${join(",
    "${body[",
    "last-1",
    ".toUpperCase()",
    ".substring(",
    ".split(",
    ".get(",
    "}",
];

fn token_soup() -> impl Strategy<Value = String> {
    let tokens: Vec<&str> = [FRAGMENTS, OPERANDS, OPERATORS].concat();
    prop::collection::vec((prop::sample::select(tokens), prop::bool::ANY), 0..12).prop_map(
        |parts| {
            let mut text = String::new();
            for (token, spaced) in parts {
                text.push_str(token);
                if spaced {
                    text.push(' ');
                }
            }
            text
        },
    )
}

const OPERANDS: &[&str] = &[
    "${body}",
    "${header.x}",
    "${header.n}",
    "${header.f}",
    "${header.b}",
    "${header.none}",
    "${exchangeProperty.p}",
    "${exchangeId}",
    "'gold'",
    "\"a b\"",
    "'a,b'",
    "''",
    "10",
    "9",
    "-1.5",
    "true",
    "false",
    "null",
];
const OPERATORS: &[&str] = &[
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "=~",
    "!=~",
    "contains",
    "not contains",
    "!contains",
    "~~",
    "!~~",
    "startsWith",
    "endsWith",
    "regex",
    "not regex",
    "in",
    "not in",
    "!in",
];

/// A well-formed condition: comparisons (or lone operands) joined by logical operators.
fn condition() -> impl Strategy<Value = String> {
    let comparison = (
        prop::sample::select(OPERANDS),
        prop::option::of((
            prop::sample::select(OPERATORS),
            prop::sample::select(OPERANDS),
        )),
    )
        .prop_map(|(left, rest)| match rest {
            Some((op, right)) => format!("{left} {op} {right}"),
            None => left.to_owned(),
        });
    (
        comparison.clone(),
        prop::collection::vec(
            (
                prop::sample::select(&["&&", "||", "and", "or"][..]),
                comparison,
            ),
            1..4,
        ),
    )
        .prop_map(|(first, rest)| {
            rest.into_iter()
                .fold(first, |text, (join, next)| format!("{text} {join} {next}"))
        })
}

fn exchanges() -> Vec<Exchange> {
    let mut with_everything = Exchange::new("Hello")
        .with_header("x", "a")
        .with_header("n", 10)
        .with_header("f", 1.5)
        .with_header("b", true);
    with_everything.properties.insert("p", "9");
    vec![
        Exchange::default(),
        with_everything,
        Exchange::new(Body::from(serde_json::json!({"a": [1, 2]})))
            .with_header("x", Value::from_json(serde_json::json!(["a", 1])))
            .with_header("n", "not a number"),
        Exchange::new(Body::from(vec![0xff, 0xfe, b'x']))
            .with_header("x", bytes::Bytes::from_static(&[0xc3]))
            .with_header("n", Value::Float(f64::NAN)),
    ]
}

fn check_error_column(text: &str, column: usize) -> Result<(), TestCaseError> {
    let last = text.chars().count() + 1;
    prop_assert!(
        (1..=last).contains(&column),
        "column {column} outside 1..={last} for {text:?}"
    );
    Ok(())
}

fn compile_and_evaluate(text: &str) -> Result<(), TestCaseError> {
    match simple(text) {
        Ok(expression) => {
            for ex in exchanges() {
                let _ = expression.evaluate(&ex);
            }
        }
        Err(e) => check_error_column(text, e.column)?,
    }
    match simple_predicate(text) {
        Ok(predicate) => {
            for ex in exchanges() {
                let _ = predicate.matches(&ex);
            }
        }
        Err(e) => check_error_column(text, e.column)?,
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        compile_and_evaluate(&text)?;
    }

    #[test]
    fn grammar_token_soup_never_panics(text in token_soup()) {
        compile_and_evaluate(&text)?;
    }

    #[test]
    fn well_formed_conditions_compile_and_yield_booleans(text in condition()) {
        let predicate = simple_predicate(&text);
        prop_assert!(predicate.is_ok(), "{}: {:?}", text, predicate.err());
        let expression = simple(&text);
        prop_assert!(expression.is_ok(), "{}: {:?}", text, expression.err());
        let (predicate, expression) = (predicate.unwrap(), expression.unwrap());
        for ex in exchanges() {
            // A pattern read from the exchange may be an invalid regex: an error, not a panic.
            if let Ok(value) = expression.evaluate(&ex) {
                prop_assert!(matches!(value, Value::Bool(_)), "{}: {:?}", text, value);
                prop_assert_eq!(predicate.matches(&ex).ok(), Some(value.is_truthy()), "{}", text);
            }
        }
    }

    #[test]
    fn text_without_functions_or_spaces_is_itself(text in "[^$\\s]{0,20}") {
        let value = simple(&text).unwrap().evaluate(&Exchange::default()).unwrap();
        prop_assert_eq!(value, Value::from(text.as_str()));
    }

    #[test]
    fn numbers_compare_as_numbers_even_as_text(a in any::<i64>(), b in any::<i64>()) {
        let ex = Exchange::new("").with_header("a", a.to_string()).with_header("b", b);
        for (op, expected) in [(">", a > b), ("<", a < b), ("==", a == b), (">=", a >= b)] {
            let text = format!("${{header.a}} {op} ${{header.b}}");
            let holds = simple_predicate(&text).unwrap().matches(&ex).unwrap();
            prop_assert_eq!(holds, expected, "{}", text);
        }
    }

    #[test]
    fn a_lone_header_comes_back_unchanged(n in any::<i64>(), s in "\\PC{0,10}") {
        let ex = Exchange::new("").with_header("n", n).with_header("s", s.as_str());
        prop_assert_eq!(simple("${header.n}").unwrap().evaluate(&ex).unwrap(), Value::Int(n));
        prop_assert_eq!(simple("${header.s}").unwrap().evaluate(&ex).unwrap(), Value::from(s.as_str()));
    }
}
