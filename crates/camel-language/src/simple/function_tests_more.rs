//! More function families through the public API: conversions, dates, environment,
//! files, JSON, and the Camel functions refused at load time.

use camel_api::{Body, Exchange, Value};
use serde_json::json;

use super::function_tests::{error_at, eval, eval_on, exchange, fails_when_evaluated, json_of};
use super::*;

#[test]
fn body_conversions() {
    let n = Exchange::new("42");
    assert_eq!(eval_on(&n, "${bodyAs(Integer)}"), Value::Int(42));
    assert_eq!(eval_on(&n, "${mandatoryBodyAs(Long)}"), Value::Int(42));
    assert_eq!(eval_on(&n, "${bodyAs(String).length()}"), Value::Int(2));
    assert!(
        fails_when_evaluated(&Exchange::default(), "${mandatoryBodyAs(String)}").contains("empty")
    );
    assert_eq!(
        eval_on(&Exchange::default(), "${bodyAs(String)}"),
        Value::from("")
    );
    assert_eq!(
        eval_on(&Exchange::new("a\r\nb\nc"), "${bodyOneLine}"),
        Value::from("abc")
    );
    let json_body = Exchange::new(Body::from(json!({"a": 1})));
    assert_eq!(
        eval_on(&json_body, "${prettyBody}"),
        Value::from("{\n  \"a\": 1\n}")
    );
    assert_eq!(error_at("${bodyAs(Date)}").0, 10);
}

#[test]
fn dates() {
    assert_eq!(
        eval("${date:header.t:yyyy-MM-dd'T'HH:mm:ss.SSS}"),
        Value::from("2024-02-29T13:05:09.007")
    );
    assert_eq!(eval("${date:header.t+1h:HH}"), Value::from("14"));
    assert_eq!(
        eval("${date:header.t-24h:yyyyMMdd}"),
        Value::from("20240228")
    );
    assert_eq!(
        eval("${date-with-timezone:header.t:GMT+8:yyyy-MM-dd HH:mm z}"),
        Value::from("2024-02-29 21:05 GMT+08:00")
    );
    assert_eq!(
        eval("${date:header.t}"),
        Value::from("2024-02-29T13:05:09.007Z")
    );
    assert_eq!(eval("${date:header.none:yyyy}"), Value::Null);
    let Value::Int(now) = eval("${date:millis}") else {
        panic!("millis is not a number");
    };
    assert!(now > 1_700_000_000_000);
    let Value::Text(year) = eval("${date:now:yyyy}") else {
        panic!("a formatted date is text");
    };
    assert_eq!(year.len(), 4);
    let file = Exchange::new("").with_header("CamelFileLastModified", 0);
    assert_eq!(eval_on(&file, "${date:file:yyyy}"), Value::from("1970"));
    assert_eq!(error_at("${date:now:yyyy-qq}").0, 17);
    assert_eq!(error_at("${date:soon:yyyy}").0, 8);
    assert_eq!(error_at("${date-with-timezone:now:Mars/Olympus:HH}").0, 26);
    assert_eq!(error_at("${date:exchangeCreated}").0, 8);
}

#[test]
fn environment_ids_and_files() {
    let ex = exchange();
    let Value::Text(a) = eval("${uuid}") else {
        panic!("uuid is text");
    };
    assert_eq!(a.len(), 36);
    assert_ne!(eval("${uuid}"), Value::Text(a));
    let path = std::env::var("PATH").unwrap_or_default();
    assert_eq!(eval("${env.PATH}"), Value::from(path.as_str()));
    assert_eq!(
        eval("${sysenv:NO_SUCH_VARIABLE_HOPEFULLY_1234}"),
        Value::Null
    );
    assert_eq!(
        eval_on(&ex, "${exchangeId}"),
        Value::from(ex.id.to_string())
    );
    let file = Exchange::new("").with_header("CamelFileName", "in/a.csv");
    assert_eq!(
        eval_on(&file, "${file:onlyname.noext}.${file:ext}"),
        Value::from("a.csv")
    );
    assert_eq!(eval_on(&file, "${file:name}"), Value::from("in/a.csv"));
    assert_eq!(error_at("${file:nme}").0, 8);
}

#[test]
fn route_id_is_the_compiling_route_and_camel_id_the_context_name() {
    let ex = Exchange::new("b");
    let in_route =
        camel_api::compiling_route("orders", || simple("${routeId} on ${camelId}")).unwrap();
    assert_eq!(
        in_route.evaluate(&ex).unwrap(),
        Value::from("orders on camel-1")
    );
    // Outside a route there is no route id to give.
    assert_eq!(error_at("${routeId}").0, 3);
}

#[test]
fn camel_functions_without_a_counterpart_are_refused_where_they_stand() {
    for (text, col, word) in [
        ("${routeId}", 3, "routeId"),
        ("${stepId}", 3, "stepId"),
        ("${sys.user.home}", 3, "sys"),
        ("${bean:orders.list}", 3, "bean"),
    ] {
        let (c, msg) = error_at(text);
        assert_eq!(c, col, "{text}");
        assert!(
            msg.contains(&format!("`{word}` is not supported")),
            "{text}: {msg}"
        );
    }
}

#[test]
fn unsupported_operators_are_refused_in_predicates() {
    for (text, col) in [
        ("${header.n} range '1..20'", 13),
        ("${header.x} is 'String'", 13),
    ] {
        let e = simple_predicate(text).unwrap_err();
        assert_eq!(e.column, col, "{text}");
        assert!(e.message.contains("is not supported"), "{}", e.message);
    }
    // As an expression without a function, the words stay prose.
    assert_eq!(eval("this is it"), Value::from("this is it"));
}

#[test]
fn json_escape_and_padding_functions() {
    assert_eq!(eval("${pad(${header.x},6)}"), Value::from("gold  "));
    assert_eq!(eval("${pad(${header.x},-6,'@')}"), Value::from("@@gold"));
    assert_eq!(
        eval("${escape(html,'Tom & Jerry')}"),
        Value::from("Tom &amp; Jerry")
    );
    assert_eq!(eval("${escape(url)}"), Value::from("Hello%20World"));
    assert_eq!(eval("${escape(sql,\"O'Brien\")}"), Value::from("O''Brien"));
    assert_eq!(eval("${safeQuote(${header.n})}"), Value::from("10"));
    assert_eq!(eval("${safeQuote(${header.x})}"), Value::from("\"gold\""));
    assert_eq!(eval("${safeQuote(${header.none})}"), Value::from("null"));
    assert_eq!(
        eval("${toJson(${header.map})}"),
        Value::from(r#"{"k":"v","n":2}"#)
    );
    assert_eq!(eval("${toJson(${header.x})}"), Value::from("gold"));
    assert_eq!(
        eval("${toPrettyJson(${header.list})}"),
        Value::from("[\n  \"p\",\n  \"q\",\n  \"r\"\n]")
    );
    let json_body = Exchange::new(Body::from(json!({"a": 1})));
    assert_eq!(
        eval_on(&json_body, "${toJsonBody}"),
        Value::from(r#"{"a":1}"#)
    );
    assert_eq!(
        eval_on(&json_body, "${pretty(${body})}"),
        Value::from("{\n  \"a\": 1\n}")
    );
    assert_eq!(error_at("${escape(yaml)}").0, 10);
    assert_eq!(error_at("${pad(x,wide)}").0, 9);
    assert_eq!(error_at("${pad(x)}").0, 3);
}

#[test]
fn jsonpath_function() {
    let order = Exchange::new(Body::from(
        json!({"id": 7, "items": [{"sku": "a", "qty": 20}, {"sku": "b", "qty": 1}]}),
    ))
    .with_header("doc", r#"{"name": "scott"}"#);
    assert_eq!(eval_on(&order, "${jsonpath($.id)}"), Value::Int(7));
    assert_eq!(
        eval_on(&order, "${jsonpath($.items[?@.qty > 10].sku)}").to_json(),
        json!(["a"])
    );
    assert_eq!(
        eval_on(&order, "${jsonpath($.items[0,1].sku)}").to_json(),
        json!(["a", "b"])
    );
    assert_eq!(
        eval_on(&order, "${jsonpath(${header.doc},$.name)}"),
        Value::from("scott")
    );
    assert_eq!(eval_on(&order, "id=${jsonpath($.id)}"), Value::from("id=7"));
    assert!(fails_when_evaluated(&order, "${jsonpath($.nope)}").contains("no match"));
    let (col, msg) = error_at("${jsonpath($.[)}");
    assert!(msg.contains("invalid JSONPath"), "{msg}");
    assert!((12..=15).contains(&col), "{col}");
    assert_eq!(error_at("${jsonpath()}").0, 3);
    assert_eq!(error_at("${jsonpath(${header.doc})}").0, 25);
}

#[test]
fn list_functions() {
    assert_eq!(json_of("${list(1,'a',${header.n})}"), json!(["1", "a", 10]));
    assert_eq!(
        json_of("${list(${header.list},x)}"),
        json!(["p", "q", "r", "x"])
    );
    assert_eq!(json_of("${reverse(1,2,3)}"), json!(["3", "2", "1"]));
    assert_eq!(json_of("${distinct(Z,X,Z,A,X)}"), json!(["Z", "X", "A"]));
    assert_eq!(
        json_of("${sort(${header.list},true)}"),
        json!(["r", "q", "p"])
    );
    let numbers = Exchange::new(Body::from(json!([10, 9, 100])));
    assert_eq!(
        eval_on(&numbers, "${sort()}").to_json(),
        json!([9, 10, 100])
    );
    assert_eq!(
        eval_on(&numbers, "${sort(true)}").to_json(),
        json!([100, 10, 9])
    );
    assert_eq!(
        eval_on(&numbers, "${reverse()}").to_json(),
        json!([100, 9, 10])
    );
    let Value::Json(shuffled) = eval("${shuffle(${header.list})}") else {
        panic!("shuffle yields a list");
    };
    let mut items: Vec<String> = shuffled
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.to_string())
        .collect();
    items.sort();
    assert_eq!(items, ["\"p\"", "\"q\"", "\"r\""]);
    assert_eq!(error_at("${sort(a,b,c)}").0, 3);
}

#[test]
fn hash_is_sha_256_in_hex() {
    let hello = Exchange::new("hello");
    let expected = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    assert_eq!(eval_on(&hello, "${hash()}"), Value::from(expected));
    assert_eq!(
        eval_on(&hello, "${hash(${body},SHA-256)}"),
        Value::from(expected)
    );
    let (col, msg) = error_at("${hash(${body},SHA3-256)}");
    assert_eq!(col, 16);
    assert!(msg.contains("only SHA-256"), "{msg}");
}

#[test]
fn create_empty() {
    assert_eq!(json_of("${empty(list)}"), json!([]));
    assert_eq!(json_of("${createEmpty(map)}"), json!({}));
    assert_eq!(eval("${createEmpty(string)}"), Value::from(""));
    assert_eq!(error_at("${empty(set)}").0, 9);
}

#[test]
fn every_documented_function_example_compiles() {
    let guide = include_str!("../../../../docs/languages.md");
    let start = guide.find("### Functions").unwrap_or(0);
    let end = guide
        .find("### Templates and values")
        .unwrap_or(guide.len());
    let mut checked = 0;
    let rows = guide[start..end].lines().filter(|l| l.starts_with('|'));
    for span in rows.flat_map(|row| row.split('`').skip(1).step_by(2)) {
        if span.contains("${") && span != "${}" && !span.contains('…') {
            if let Err(e) = simple(span) {
                panic!("documented example `{span}` does not compile: {e}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} examples found");
}

#[test]
fn templates_fill_functions_inside_quotes() {
    let ex = Exchange::new("b").with_header("id", "42");
    assert_eq!(
        eval_on(&ex, r#"{"id": "${header.id}"}"#),
        Value::from(r#"{"id": "42"}"#)
    );
    assert_eq!(eval_on(&ex, "say '${header.id}'"), Value::from("say '42'"));
}

#[test]
fn message_timestamp_is_the_header_consumers_set_and_null_without_it() {
    let stamped = Exchange::new("x").with_header("CamelMessageTimestamp", 1_700_000_000_000i64);
    assert_eq!(
        eval_on(&stamped, "${messageTimestamp}"),
        Value::Int(1_700_000_000_000)
    );
    assert_eq!(
        eval_on(&Exchange::new("x"), "${messageTimestamp}"),
        Value::Null
    );
}

#[test]
fn jsonpath_on_a_named_input() {
    let ex = Exchange::new("not json")
        .with_header("doc", r#"{"name": "scott", "tags": ["a", "b"]}"#)
        .with_header("with space", r#"{"n": 1}"#);
    assert_eq!(
        eval_on(&ex, "${jsonpath(header:doc,$.name)}"),
        Value::from("scott")
    );
    assert_eq!(
        eval_on(&ex, "${jsonpath(header:with space, $.n)}"),
        Value::Int(1)
    );
    assert_eq!(
        eval_on(&ex, "${jsonpath(header:doc,$.tags[0,1])}").to_json(),
        json!(["a", "b"])
    );
    assert!(error_at("${jsonpath(header:doc)}")
        .1
        .contains("missing `,`"));
}

#[test]
fn jq_function() {
    let mut order = Exchange::new(Body::from(
        json!({"id": 7, "items": [{"sku": "a", "qty": 20}, {"sku": "b", "qty": 1}]}),
    ))
    .with_header("doc", r#"{"name": "scott"}"#);
    order.properties.insert("p", Value::from("[1, 2, 3]"));
    assert_eq!(eval_on(&order, "${jq(.id)}"), Value::Int(7));
    assert_eq!(
        eval_on(&order, "${jq(.items | map(.qty) | add)}"),
        Value::Int(21)
    );
    // A filter holds commas of its own.
    assert_eq!(
        eval_on(&order, "${jq([.id, (.items | length)])}").to_json(),
        json!([7, 2])
    );
    assert_eq!(
        eval_on(&order, "${jq(header:doc,.name)}"),
        Value::from("scott")
    );
    assert_eq!(
        eval_on(&order, "${jq(exchangeProperty:p, length)}"),
        Value::Int(3)
    );
    assert_eq!(eval_on(&order, "${jq(property:p, .[1])}"), Value::Int(2));
    assert_eq!(
        eval_on(&order, "${jq(${header.doc}, .name)}"),
        Value::from("scott")
    );
    assert_eq!(
        eval_on(&order, "sku=${jq(.items[0].sku)}"),
        Value::from("sku=a")
    );
    assert!(simple_predicate("${jq(.id)} == 7")
        .unwrap()
        .matches(&order)
        .unwrap());
    let (col, msg) = error_at("${jq(.id | nosuch)}");
    assert!(
        msg.contains("invalid jq filter") && msg.contains("nosuch"),
        "{msg}"
    );
    assert_eq!(col, 12);
    assert!(error_at("${jq()}").1.contains("needs a filter"));
    assert!(fails_when_evaluated(&Exchange::new("x"), "${jq(.a)}").contains("not JSON"));
}

#[test]
fn header_as_converts_like_body_as() {
    let ex = Exchange::new("")
        .with_header("n", "42")
        .with_header("f", "2.5")
        .with_header("b", "TRUE")
        .with_header("i", 7);
    assert_eq!(eval_on(&ex, "${headerAs(n,Integer)}"), Value::Int(42));
    assert_eq!(
        eval_on(&ex, "${headerAs('n', java.lang.Long)}"),
        Value::Int(42)
    );
    assert_eq!(eval_on(&ex, "${headerAs(f,Double)}"), Value::Float(2.5));
    assert_eq!(eval_on(&ex, "${headerAs(b,Boolean)}"), Value::Bool(true));
    assert_eq!(eval_on(&ex, "${headerAs(i,String)}"), Value::from("7"));
    assert_eq!(
        eval_on(&ex, "${headerAs(i,String).length()}"),
        Value::Int(1)
    );
    assert_eq!(eval_on(&ex, "${headerAs(missing,Integer)}"), Value::Null);
    assert!(simple_predicate("${headerAs(n,Integer)} > 41")
        .unwrap()
        .matches(&ex)
        .unwrap());
    assert!(fails_when_evaluated(&ex, "${headerAs(b,Integer)}").contains("integer"));
    assert!(error_at("${headerAs(n,Date)}").1.contains("unknown type"));
    assert!(error_at("${headerAs(n)}")
        .1
        .contains("a header name and a type"));
}
