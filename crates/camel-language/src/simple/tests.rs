use camel_api::{Body, Exchange, Value};
use serde_json::json;

use super::*;

fn exchange() -> Exchange {
    let mut ex = Exchange::new("Hello World")
        .with_header("x", "gold")
        .with_header("n", 10)
        .with_header("text_n", "10")
        .with_header("flag", true)
        .with_header("my.dotted", "d");
    ex.properties.insert("p", "prop");
    ex
}

fn eval(text: &str) -> Value {
    simple(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .evaluate(&exchange())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn holds(text: &str) -> bool {
    simple_predicate(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .matches(&exchange())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn error(text: &str) -> ExpressionError {
    match simple_predicate(text) {
        Ok(p) => panic!("{text} compiled to {p:?}"),
        Err(e) => e,
    }
}

#[test]
fn functions_yield_their_values_untyped() {
    assert_eq!(eval("${body}"), Value::from("Hello World"));
    assert_eq!(eval("${in.body}"), Value::from("Hello World"));
    assert_eq!(eval("${header.n}"), Value::Int(10));
    assert_eq!(eval("${headers.n}"), Value::Int(10));
    assert_eq!(eval("${in.header.n}"), Value::Int(10));
    assert_eq!(eval("${header[n]}"), Value::Int(10));
    assert_eq!(eval("${header.my.dotted}"), Value::from("d"));
    assert_eq!(eval("${header.flag}"), Value::Bool(true));
    assert_eq!(eval("${header.none}"), Value::Null);
    assert_eq!(eval("${exchangeProperty.p}"), Value::from("prop"));
    assert_eq!(eval("${bodyAs(String)}"), Value::from("Hello World"));
    assert_eq!(eval("${null}"), Value::Null);
}

#[test]
fn exchange_id_is_the_exchange_id() {
    let ex = exchange();
    let id = simple("${exchangeId}").unwrap().evaluate(&ex).unwrap();
    assert_eq!(id, Value::from(ex.id.to_string()));
}

#[test]
fn json_bodies_stay_json() {
    let ex = Exchange::new(Body::from(json!({"a": 1})));
    let value = simple("${body}").unwrap().evaluate(&ex).unwrap();
    assert_eq!(value.to_json(), json!({"a": 1}));
    let text = simple("got ${body}").unwrap().evaluate(&ex).unwrap();
    assert_eq!(text, Value::from(r#"got {"a":1}"#));
}

#[test]
fn templates_build_text() {
    assert_eq!(
        eval("Hello ${body} from ${header.x}"),
        Value::from("Hello Hello World from gold")
    );
    assert_eq!(
        eval("n=${header.n};missing=${header.none}."),
        Value::from("n=10;missing=.")
    );
    assert_eq!(eval(" ${header.n}"), Value::from(" 10"));
    assert_eq!(
        eval("<order>${header.x}</order>"),
        Value::from("<order>gold</order>")
    );
    assert_eq!(eval("plain text"), Value::from("plain text"));
    assert_eq!(eval("42"), Value::from("42"));
    assert_eq!(eval(""), Value::from(""));
}

#[test]
fn prose_with_operator_words_stays_text() {
    assert_eq!(eval("Log in ${header.x}"), Value::from("Log in gold"));
    assert_eq!(
        eval("It's ${header.x} and more"),
        Value::from("It's gold and more")
    );
    assert_eq!(
        eval("Price > ${header.n} or less"),
        Value::from("Price > 10 or less")
    );
    assert_eq!(eval("said 'a == b'"), Value::from("said 'a == b'"));
    assert_eq!(eval("<"), Value::from("<"));
    assert_eq!(eval("and or"), Value::from("and or"));
}

#[test]
fn conditions_as_expressions_are_booleans() {
    assert_eq!(eval("${header.n} > 5"), Value::Bool(true));
    assert_eq!(eval("${header.x} == 'silver'"), Value::Bool(false));
    assert_eq!(
        eval("${header.flag} && ${header.n} == 10"),
        Value::Bool(true)
    );
}

#[test]
fn comparisons() {
    assert!(holds("${header.x} == 'gold'"));
    assert!(holds("${header.x} == \"gold\""));
    assert!(holds("${header.x} != 'silver'"));
    assert!(holds("${header.n} == 10"));
    assert!(holds("${header.n} == '10'"));
    assert!(holds("${header.text_n} > 9"));
    assert!(holds("${header.text_n} > '9'"));
    assert!(holds("'10' > '9'"));
    assert!(holds("${header.n} >= 10"));
    assert!(holds("${header.n} <= 10.0"));
    assert!(!holds("${header.n} < 10"));
    assert!(holds("${header.n} < 10.5"));
    assert!(holds("${header.flag} == true"));
    assert!(holds("${header.none} == null"));
    assert!(!holds("${header.none} > 1"));
    assert!(holds("'abc' < 'abd'"));
    assert!(holds("${header.x} =~ 'GOLD'"));
}

#[test]
fn contains_and_affixes() {
    assert!(holds("${body} contains 'World'"));
    assert!(!holds("${body} contains 'world'"));
    assert!(holds("${body} ~~ 'world'"));
    assert!(holds("${body} not contains 'Moon'"));
    assert!(holds("${body} !contains 'Moon'"));
    assert!(!holds("${body} not contains 'World'"));
    assert!(holds("${body} startsWith 'Hello'"));
    assert!(holds("${body} endsWith 'World'"));
    assert!(holds("${body} contains 'o W'"));
}

#[test]
fn camels_two_word_affix_operators() {
    // Camel spells them `starts with` and `ends with` too; read as text they would make
    // the predicate silently false.
    assert!(holds("${body} starts with 'Hello'"));
    assert!(!holds("${body} starts with 'World'"));
    assert!(holds("${body} ends with 'World'"));
    assert!(holds("${body} !starts with 'World'"));
    assert!(holds("${body} not ends with 'Hello'"));
    assert!(!holds("${body} not starts with 'Hello'"));
    assert!(holds(
        "${body} starts with 'Hello' && ${body} ends with 'World'"
    ));
}

#[test]
fn regex_matches_the_whole_text() {
    assert!(holds("${body} regex 'Hello.*'"));
    assert!(!holds("${body} regex 'World'"));
    assert!(holds("${body} not regex 'World'"));
    assert!(holds("${header.n} regex '\\d+'"));
    assert!(holds("${header.none} not regex 'x'"));
}

#[test]
fn regex_from_a_header_is_compiled_when_evaluated() {
    let ex = exchange()
        .with_header("pattern", "H.*d")
        .with_header("broken", "(");
    let p = simple_predicate("${body} regex ${header.pattern}").unwrap();
    assert!(p.matches(&ex).unwrap());
    let p = simple_predicate("${body} regex ${header.broken}").unwrap();
    let err = p.matches(&ex).unwrap_err();
    assert!(err.to_string().contains("invalid regex"), "{err}");
}

#[test]
fn in_lists() {
    assert!(holds("${header.x} in 'gold,silver'"));
    assert!(holds("${header.x} in 'bronze, gold'"));
    assert!(!holds("${header.x} in 'bronze,silver'"));
    assert!(holds("${header.x} not in 'bronze,silver'"));
    assert!(holds("${header.x} !in 'bronze'"));
    assert!(holds("${header.n} in '1,10,100'"));
    let ex = exchange().with_header("allowed", "a,gold");
    assert!(simple_predicate("${header.x} in ${header.allowed}")
        .unwrap()
        .matches(&ex)
        .unwrap());
}

#[test]
fn logical_operators_with_precedence() {
    assert!(holds("${header.x} == 'gold' && ${header.n} > 5"));
    assert!(!holds("${header.x} == 'gold' && ${header.n} > 50"));
    assert!(holds("${header.x} == 'lead' || ${header.n} > 5"));
    assert!(holds("${header.x} == 'gold' and ${header.n} > 5"));
    assert!(holds("${header.x} == 'lead' or ${header.n} > 5"));
    // `&&` binds tighter: false || (true && true).
    assert!(holds("1 == 2 || 1 == 1 && 2 == 2"));
    // (true && false) || false.
    assert!(!holds("1 == 1 && 1 == 2 || 1 == 3"));
    assert!(holds("${header.flag} && ${header.x} == 'gold'"));
}

#[test]
fn predicates_without_operators_test_truthiness() {
    assert!(holds("${header.flag}"));
    assert!(!holds("${header.x}"));
    assert!(!holds("${header.none}"));
    assert!(holds("true"));
    assert!(holds("TRUE"));
    assert!(!holds("false"));
    let ex = exchange().with_header("t", "true");
    assert!(simple_predicate("${header.t}")
        .unwrap()
        .matches(&ex)
        .unwrap());
}

/// A file's body is bytes; where they are UTF-8 they read as their text, as Camel's type
/// converter reads them.
#[test]
fn a_utf8_bytes_body_compares_and_tests_as_its_text() {
    let file = |content: &[u8]| Exchange::new(content.to_vec());
    let holds_on = |text: &str, ex: &Exchange| simple_predicate(text).unwrap().matches(ex).unwrap();
    let number = file(b"264");
    assert_eq!(
        simple("${body}").unwrap().evaluate(&number).unwrap(),
        number.message.body.to_value()
    );
    assert!(holds_on("${body} == 264", &number));
    assert!(holds_on("${body} > 99", &number));
    assert!(holds_on("${body} in '1,264'", &number));
    assert!(holds_on("${body}", &file(b"true")));
    assert!(holds_on("${body} == true", &file(b"TRUE")));
    assert!(!holds_on("${body}", &file(b"false")));
    assert!(!holds_on("${body}", &file(&[0xff, b't'])));
}

#[test]
fn predicates_accept_bare_words_and_templates_as_operands() {
    assert!(holds("${header.x} == gold"));
    assert!(holds("Hello ${header.x} == 'Hello gold'"));
    assert!(holds("${body} == 'Hello World'"));
}

#[test]
fn unterminated_function_reports_its_column() {
    let e = error("abc ${header.x");
    assert_eq!((e.column, e.language.as_str()), (5, "simple"));
    assert!(e.message.contains("unterminated"), "{}", e.message);
    assert_eq!(e.expression, "abc ${header.x");
}

#[test]
fn unknown_function_reports_its_column() {
    let e = error("${header.x} == ${bdy}");
    assert_eq!(e.column, 18);
    assert!(
        e.message.contains("unknown function `bdy`"),
        "{}",
        e.message
    );
    // Also in an expression, even inside prose.
    assert_eq!(simple("Hi ${foo}").unwrap_err().column, 6);
}

#[test]
fn missing_operands_report_their_column() {
    let e = error("${header.x} ==");
    assert_eq!(e.column, 15);
    assert!(e.message.contains("missing right operand"), "{}", e.message);
    let e = error("== 'a'");
    assert_eq!(e.column, 1);
    assert!(e.message.contains("missing left operand"), "{}", e.message);
    let e = error("${header.flag} &&");
    assert_eq!(e.column, 18);
    assert!(
        e.message.contains("missing operand after `&&`"),
        "{}",
        e.message
    );
    let e = error("|| ${header.flag}");
    assert_eq!(e.column, 1);
    let e = simple("${header.n} == ").unwrap_err();
    assert_eq!(e.column, 15);
}

#[test]
fn chained_comparisons_are_rejected() {
    let e = error("1 == 1 == 1");
    assert_eq!(e.column, 8);
    assert!(e.message.contains("&&"), "{}", e.message);
}

#[test]
fn bad_regex_reports_the_pattern_column() {
    let e = error("${body} regex '(unclosed'");
    assert_eq!(e.column, 15);
    assert!(e.message.contains("invalid regex"), "{}", e.message);
}

#[test]
fn unterminated_quote_in_a_condition() {
    let e = error("${header.x} == 'gold");
    assert_eq!(e.column, 16);
    assert!(e.message.contains("unterminated quote"), "{}", e.message);
    assert_eq!(simple("${header.x} == 'gold").unwrap_err().column, 16);
}

#[test]
fn columns_count_characters() {
    let e = error("é ${nope}");
    assert_eq!(e.column, 5);
}

#[test]
fn language_rejects_options_and_compiles_both_forms() {
    let options = serde_json::Map::new();
    let ex = exchange();
    let e = SimpleLanguage.expression("${header.n}", &options).unwrap();
    assert_eq!(e.evaluate(&ex).unwrap(), Value::Int(10));
    let p = SimpleLanguage
        .predicate("${header.n} > 1", &options)
        .unwrap();
    assert!(p.matches(&ex).unwrap());
    let mut bad = serde_json::Map::new();
    bad.insert("trimm".into(), true.into());
    assert!(SimpleLanguage.expression("x", &bad).is_err());
    // Camel's `trim` and `resultType`.
    let mut typed = serde_json::Map::new();
    typed.insert("resultType".into(), "java.lang.Integer".into());
    typed.insert("trim".into(), true.into());
    let e = SimpleLanguage.expression(" ${body} ", &typed).unwrap();
    assert_eq!(e.evaluate(&Exchange::new("12")).unwrap(), Value::Int(12));
    let err = e.evaluate(&Exchange::new("twelve")).unwrap_err();
    assert!(err.to_string().contains("cannot convert"), "{err}");
    assert!(format!("{e:?}").contains("simple"));
}

#[test]
fn error_messages_read_as_documented() {
    assert_eq!(
        simple("${header.x} == ").unwrap_err().to_string(),
        "simple expression `${header.x} == `: missing right operand for `==` (at column 15)"
    );
    assert_eq!(
        simple("${hedaer.x}").unwrap_err().to_string(),
        "simple expression `${hedaer.x}`: unknown function `hedaer.x`; did you mean `header`? (at column 3)"
    );
}

#[test]
fn documented_examples_hold() {
    assert!(holds("'010' == 10"));
    assert!(holds("${header.x} in 'eu, gold'"));
    assert!(!holds("${header.n}==10"));
    assert_eq!(eval("${header.n}==10"), Value::from("10==10"));
    let ex = exchange().with_header("total", 150).with_header("limit", 5);
    let value = |t: &str| simple(t).unwrap().evaluate(&ex).unwrap();
    assert_eq!(value("${header.total} > 100"), Value::Bool(true));
    assert_eq!(
        value("Price > ${header.limit} or less"),
        Value::from("Price > 5 or less")
    );
}

#[test]
fn functions_inside_quoted_literals_are_evaluated() {
    let ex = Exchange::new("a-1")
        .with_header("x", "a")
        .with_header("n", 1)
        .with_header("list", "b,c");
    let holds = |t: &str| simple_predicate(t).unwrap().matches(&ex).unwrap();
    assert!(holds("${body} == '${header.x}-${header.n}'"));
    assert!(holds("${body} == \"${header.x}-1\""));
    assert!(holds("${body} startsWith '${header.x}'"));
    assert!(!holds("${body} == '${header.x}'"));
    assert!(holds("${header.x} in 'z,${header.x}'"));
    assert!(holds("${body} regex '${header.x}-\\d'"));
    // The same condition compiled as an expression.
    let e = simple("${body} == '${header.x}-${header.n}'").unwrap();
    assert_eq!(e.evaluate(&ex).unwrap(), Value::Bool(true));
    // A literal without functions stays as written.
    assert!(holds("${header.x} != '$x'"));
    // A date pattern's own quotes inside a quoted text.
    let t = simple("'${date:now:yyyy'-'MM}'")
        .unwrap()
        .evaluate(&ex)
        .unwrap();
    let t = t.to_string();
    assert!(
        t.starts_with("'2") && t.ends_with('\'') && t.len() == 9,
        "{t}"
    );
}

#[test]
fn functions_inside_quoted_arguments_are_evaluated() {
    let ex = Exchange::new("a")
        .with_header("x", "a")
        .with_header("t", 2024);
    let eval = |t: &str| simple(t).unwrap().evaluate(&ex).unwrap();
    assert_eq!(eval("${concat('${header.x}','-z')}"), Value::from("a-z"));
    assert_eq!(eval("${replace('a','y${header.t}')}"), Value::from("y2024"));
    assert_eq!(
        eval("${header.x.replace('a','${header.t}')}"),
        Value::from("2024")
    );
    assert_eq!(
        eval("${iif(${body} == '${header.x}','yes','no')}"),
        Value::from("yes")
    );
    // An operator inside quotes is text, not a condition.
    assert_eq!(
        eval("${concat('${header.x} == a','!')}"),
        Value::from("a == a!")
    );
}
