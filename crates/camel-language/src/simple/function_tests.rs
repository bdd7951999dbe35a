//! The functions through the public API, one test per family: values, and the column of
//! the error a bad use reports.

use camel_api::{Body, Exchange, Value};
use serde_json::json;

use super::*;

pub(super) fn exchange() -> Exchange {
    let mut ex = Exchange::new("Hello World")
        .with_header("x", "gold")
        .with_header("n", 10)
        .with_header("csv", "a,b,c")
        .with_header("list", Value::from_json(json!(["p", "q", "r"])))
        .with_header("map", Value::from_json(json!({"k": "v", "n": 2})))
        .with_header("t", 1_709_211_909_007i64);
    ex.properties.insert("p", "prop");
    ex
}

pub(super) fn eval_on(ex: &Exchange, text: &str) -> Value {
    simple(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .evaluate(ex)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

pub(super) fn eval(text: &str) -> Value {
    eval_on(&exchange(), text)
}

pub(super) fn json_of(text: &str) -> serde_json::Value {
    eval(text).to_json()
}

/// The column of the load error, and its message.
pub(super) fn error_at(text: &str) -> (usize, String) {
    match simple(text) {
        Ok(e) => panic!("{text} compiled to {e:?}"),
        Err(e) => (e.column, e.message),
    }
}

pub(super) fn fails_when_evaluated(ex: &Exchange, text: &str) -> String {
    let compiled = simple(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    match compiled.evaluate(ex) {
        Ok(v) => panic!("{text} evaluated to {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn text_functions() {
    assert_eq!(eval("${uppercase()}"), Value::from("HELLO WORLD"));
    assert_eq!(eval("${lowercase(${header.x})}"), Value::from("gold"));
    assert_eq!(eval("${trim('  a ')}"), Value::from("a"));
    assert_eq!(
        eval("${capitalize('hello big world')}"),
        Value::from("Hello Big World")
    );
    assert_eq!(
        eval("${normalizeWhitespace('  a   b ')}"),
        Value::from("a b")
    );
    assert_eq!(eval("${quote(${header.x})}"), Value::from("\"gold\""));
    assert_eq!(eval("${unquote('\"q\"')}"), Value::from("q"));
    assert_eq!(eval("${substringBefore('World')}"), Value::from("Hello "));
    assert_eq!(
        eval("${substringAfter(${header.csv},',')}"),
        Value::from("b,c")
    );
    assert_eq!(eval("${substringAfter('nothing')}"), Value::Null);
    assert_eq!(eval("${substringBetween('H','W')}"), Value::from("ello "));
    assert_eq!(eval("${substring(6)}"), Value::from("World"));
    assert_eq!(eval("${substring(-6)}"), Value::from("Hello"));
    assert_eq!(eval("${substring(1,1)}"), Value::from("ello Worl"));
    assert_eq!(eval("${substring(1,-1,${header.x})}"), Value::from("ol"));
    assert_eq!(
        eval("${replace('World','Camel')}"),
        Value::from("Hello Camel")
    );
    assert_eq!(
        eval("${replace(',','&empty;',${header.csv})}"),
        Value::from("abc")
    );
    assert_eq!(eval("${concat('Hi ',${header.x})}"), Value::from("Hi gold"));
    assert_eq!(eval("${concat(a,b,'-')}"), Value::from("a-b"));
    assert_eq!(
        eval("${join(';','id=',${header.list})}"),
        Value::from("id=p;id=q;id=r")
    );
    assert_eq!(
        json_of("${split(${header.csv},',')}"),
        json!(["a", "b", "c"])
    );
    assert_eq!(json_of("${split(' ')}"), json!(["Hello", "World"]));
    assert_eq!(eval("${length()}"), Value::Int(11));
    assert_eq!(eval("${kindOfType(${header.map})}"), Value::from("object"));
    assert_eq!(
        eval("Got ${uppercase(${header.x})}!"),
        Value::from("Got GOLD!")
    );
}

#[test]
fn text_function_errors_are_located() {
    let (col, msg) = error_at("${substring()}");
    assert_eq!(col, 3);
    assert!(msg.contains("takes 1 to 3 argument(s)"), "{msg}");
    assert_eq!(error_at("${substring(x)}").0, 13);
    assert_eq!(error_at("${concat(a)}").0, 3);
    assert_eq!(error_at("${replace('a,b)}").0, 11);
    let (col, msg) = error_at("${uppercas()}");
    assert_eq!(col, 3);
    assert!(msg.contains("did you mean `uppercase`"), "{msg}");
    assert_eq!(error_at("${trim(${nope})}").0, 10);
}

#[test]
fn condition_functions_and_the_ternary() {
    assert_eq!(
        eval("${iif(${header.n} > 5,'big','small')}"),
        Value::from("big")
    );
    assert_eq!(
        eval("${iif(${header.n} > 50,'big',${header.x})}"),
        Value::from("gold")
    );
    assert_eq!(eval("${not(${header.x} == 'gold')}"), Value::Bool(false));
    assert_eq!(eval("${not()}"), Value::Bool(false));
    assert_eq!(eval("${contains('WORLD')}"), Value::Bool(true));
    assert_eq!(eval("${isEmpty(${header.none})}"), Value::Bool(true));
    assert_eq!(eval("${isEmpty(${header.list})}"), Value::Bool(false));
    assert_eq!(eval("${isAlpha('HelloWorld')}"), Value::Bool(true));
    assert_eq!(eval("${isAlpha()}"), Value::Bool(false));
    assert_eq!(eval("${isNumeric('0042')}"), Value::Bool(true));
    assert_eq!(eval("${isAlphaNumeric('a1')}"), Value::Bool(true));
    assert_eq!(eval("${header.n > 3}"), Value::Bool(true));
    assert_eq!(eval("Over: ${header.n > 30}"), Value::from("Over: false"));
    assert_eq!(
        eval("${header.n > 3 ? 'big' : 'small'}"),
        Value::from("big")
    );
    assert_eq!(eval("${header.n < 3 ? 1 : null}"), Value::Null);
    assert_eq!(
        eval("${header.n >= 10 && header.x == 'gold' ? ${body} : 'no'}"),
        Value::from("Hello World")
    );
    assert_eq!(
        eval("${header.n > 90 ? 'A' : ${header.n > 5 ? 'B' : 'C'}}"),
        Value::from("B")
    );
    assert!(simple_predicate("${header.n > 3}")
        .unwrap()
        .matches(&exchange())
        .unwrap());
}

#[test]
fn condition_errors_are_located() {
    assert_eq!(error_at("${iif(a,b)}").0, 3);
    assert_eq!(error_at("${header.n > 3 ? 'a'}").0, 16);
    assert_eq!(error_at("${header.n > 3 ? 'a' 'b' : 'c'}").0, 22);
    let (col, msg) = error_at("${hedaer.n > 3 ? 'a' : 'b'}");
    assert_eq!(col, 3);
    assert!(msg.contains("unknown function"), "{msg}");
}

#[test]
fn math_functions() {
    let numbers = Exchange::new(Body::from(json!([10, 20, 30])));
    assert_eq!(eval_on(&numbers, "${sum()}"), Value::Int(60));
    assert_eq!(eval_on(&numbers, "${max()}"), Value::Int(30));
    assert_eq!(eval_on(&numbers, "${min()}"), Value::Int(10));
    assert_eq!(eval_on(&numbers, "${average()}"), Value::Int(20));
    assert_eq!(eval("${sum(${header.n},-2)}"), Value::Int(8));
    assert_eq!(eval("${max(1,7,3)}"), Value::Int(7));
    assert_eq!(eval("${abs(-5)}"), Value::Int(5));
    assert_eq!(eval("${floor(5.7)}"), Value::Int(5));
    assert_eq!(eval("${ceil(5.1)}"), Value::Int(6));
    assert_eq!(json_of("${range(1,4)}"), json!([1, 2, 3]));
    for _ in 0..50 {
        let Value::Int(r) = eval("${random(18,20)}") else {
            panic!("random is not an integer");
        };
        assert!((18..20).contains(&r), "{r}");
    }
    let Value::Int(r) = eval("${random(1)}") else {
        panic!("random is not an integer");
    };
    assert_eq!(r, 0);
    assert!(fails_when_evaluated(&exchange(), "${sum(1,x)}").contains("not a whole number"));
    assert!(fails_when_evaluated(&exchange(), "${abs()}").contains("not a whole number"));
    assert_eq!(error_at("${random(5,2)}").0, 3);
    assert_eq!(error_at("${random(a)}").0, 10);
    assert_eq!(error_at("${random()}").0, 3);
}

#[test]
fn lists_maps_indexes_and_methods() {
    assert_eq!(eval("${header.list[0]}"), Value::from("p"));
    assert_eq!(eval("${header.list[last]}"), Value::from("r"));
    assert_eq!(eval("${header.list[last-1]}"), Value::from("q"));
    assert_eq!(eval("${header.map[k]}"), Value::from("v"));
    assert_eq!(eval("${header.map['none']}"), Value::Null);
    assert_eq!(eval("${header.list.size()}"), Value::Int(3));
    assert_eq!(eval("${header.list.get(1)}"), Value::from("q"));
    assert_eq!(eval("${header.map.get('n')}"), Value::Int(2));
    assert_eq!(eval("${header.map.isEmpty()}"), Value::Bool(false));
    assert_eq!(eval("${header.x.toUpperCase()}"), Value::from("GOLD"));
    assert_eq!(eval("${header[x].length()}"), Value::Int(4));
    assert_eq!(
        eval("${exchangeProperty.p.substring(1,3)}"),
        Value::from("ro")
    );
    assert_eq!(eval("${body.toLowerCase()}"), Value::from("hello world"));
    assert_eq!(eval("${body.length}"), Value::Int(11));
    assert_eq!(eval("${body.startsWith('Hell')}"), Value::Bool(true));
    assert_eq!(
        eval("${body.replace('l','L').trim()}"),
        Value::from("HeLLo WorLd")
    );
    assert_eq!(json_of("${header.csv.split(',')}"), json!(["a", "b", "c"]));
    assert_eq!(eval("${header.csv.split(',')[2]}"), Value::from("c"));
    assert_eq!(eval("${headers.size}"), Value::Int(6));
    assert_eq!(eval("${headers}").to_json()["x"], json!("gold"));
    assert_eq!(eval("${headers.x}"), Value::from("gold"));
    let json_body = Exchange::new(Body::from(json!({"items": [{"id": 7}]})));
    assert_eq!(eval_on(&json_body, "${body[items][0][id]}"), Value::Int(7));
    assert_eq!(
        eval("${header.list.contains('q')} ${header.x.endsWith('ld')}"),
        Value::from("true true")
    );
}

#[test]
fn index_and_method_errors() {
    let (col, msg) = error_at("${header.x.frob()}");
    assert_eq!(col, 12);
    assert!(msg.contains("unsupported method `frob`"), "{msg}");
    assert_eq!(error_at("${header.x.substring()}").0, 12);
    assert_eq!(error_at("${body[0}").0, 7);
    assert_eq!(error_at("${body.frob()}").0, 8);
    assert_eq!(error_at("${header.${body}}").0, 10);
    assert_eq!(error_at("${header.x is 'String'}").0, 11);
    let ex = exchange();
    assert!(fails_when_evaluated(&ex, "${header.list[9]}").contains("out of bounds"));
    assert!(fails_when_evaluated(&ex, "${body[0]}").contains("needs a list"));
    assert!(fails_when_evaluated(&ex, "${header.none.length()}").contains("null"));
    assert!(fails_when_evaluated(&ex, "${header.x.substring(2,9)}").contains("out of range"));
    // A bare name that is no method reads a map entry: of a text body, an error.
    assert!(fails_when_evaluated(&ex, "${body.frob}").contains("needs a map"));
}

#[test]
fn a_bare_name_reads_an_entry_of_a_map_body_and_question_dot_is_null_safe() {
    let ex = Exchange::new(camel_api::Body::from(serde_json::json!({
        "finding": {"title": "open port", "uid": 7},
        "score": 42,
        "none": null
    })));
    assert_eq!(
        eval_on(&ex, "${body.finding.title}"),
        Value::from("open port")
    );
    assert_eq!(eval_on(&ex, "${body.score}"), Value::Int(42));
    assert_eq!(eval_on(&ex, "${body.missing}"), Value::Null);
    assert_eq!(eval_on(&ex, "${body.none?.title}"), Value::Null);
    assert_eq!(eval_on(&ex, "${body.finding?.uid}"), Value::Int(7));
    assert!(fails_when_evaluated(&ex, "${body.none.title}").contains("`?.title`"));
    // The methods keep their meaning: `size` of the map, not an entry named so.
    assert_eq!(eval_on(&ex, "${body.size}"), Value::Int(3));
}
