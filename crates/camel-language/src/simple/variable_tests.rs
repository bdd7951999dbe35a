//! `${variable.x}`, `${variable[x]}`, `${variable.global:x}` and `${variables}`.

use camel_api::variables::set_global;
use camel_api::{Exchange, Value};
use serde_json::json;

use super::function_tests::{error_at, eval_on};

fn with_vars() -> Exchange {
    let mut ex = Exchange::new("b");
    ex.set_variable("x", "hello");
    ex.set_variable("n", 5);
    ex
}

#[test]
fn exchange_variables_are_read() {
    let ex = with_vars();
    assert_eq!(eval_on(&ex, "${variable.x}"), Value::from("hello"));
    assert_eq!(eval_on(&ex, "${variable[x]}"), Value::from("hello"));
    assert_eq!(eval_on(&ex, "v=${variable.x}!"), Value::from("v=hello!"));
    assert_eq!(
        eval_on(&ex, "${variable.x.toUpperCase()}"),
        Value::from("HELLO")
    );
    assert_eq!(eval_on(&ex, "${variable.n} > 3"), Value::Bool(true));
    assert_eq!(eval_on(&ex, "${variable.missing}"), Value::Null);
    assert_eq!(
        eval_on(&ex, "${variables}").to_json(),
        json!({"x": "hello", "n": 5})
    );
    assert_eq!(
        eval_on(&Exchange::new("b"), "${variables}").to_json(),
        json!({})
    );
}

#[test]
fn global_variables_are_shared_by_every_exchange() {
    set_global("simple_test_greeting", Some(Value::from("hi")));
    assert_eq!(
        eval_on(
            &Exchange::new("b"),
            "${variable.global:simple_test_greeting}"
        ),
        Value::from("hi")
    );
    set_global("simple_test_greeting", None);
    assert_eq!(
        eval_on(
            &Exchange::new("b"),
            "${variable.global:simple_test_greeting}"
        ),
        Value::Null
    );
}

#[test]
fn route_variables_are_read_by_route_id() {
    camel_api::variables::set_route("simple-r1", "n", Some(Value::Int(3)));
    let ex = Exchange::new("b");
    assert_eq!(eval_on(&ex, "${variable.route:simple-r1:n}"), Value::Int(3));
    assert_eq!(eval_on(&ex, "${variable.route:simple-r2:n}"), Value::Null);
}

#[test]
fn route_scope_and_missing_names_are_located_errors() {
    let (col, msg) = error_at("${variable.route:x}");
    assert_eq!(col, 11, "points at the name");
    assert!(msg.contains("route"), "{msg}");
    let (_, msg) = error_at("${variable.}");
    assert!(msg.contains("missing variable name"), "{msg}");
}
