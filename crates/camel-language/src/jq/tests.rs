use super::*;
use serde_json::json;

/// An order as a JSON body.
fn order() -> Exchange {
    let lines = json!([{"sku": "a", "qty": 2}, {"sku": "b", "qty": 5}]);
    Exchange::new(Body::from(json!({"id": 7, "vip": true, "items": lines})))
}

fn eval(text: &str, ex: &Exchange) -> serde_json::Value {
    jq(text).unwrap().evaluate(ex).unwrap().to_json()
}

#[test]
fn fromjson_of_deep_text_and_deep_results_are_errors_not_stack_overflows() {
    let deep_text = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let ex = Exchange::new(Body::from(json!({ "s": deep_text })));
    let err = jq(".s | fromjson | length")
        .unwrap()
        .evaluate(&ex)
        .unwrap_err();
    assert!(err.to_string().contains("deeper than 128"), "{err}");
    assert_eq!(eval(r#""[1,[2]]" | fromjson | length"#, &ex), json!(2));
    // A filter that builds a value 200,000 levels deep from a number in the body.
    let ex = Exchange::new(Body::from(json!({ "n": 200_000 })));
    let err = jq("reduce range(.n) as $i (0; [.])")
        .unwrap()
        .evaluate(&ex)
        .unwrap_err();
    assert!(err.to_string().contains("result nests deeper"), "{err}");
    let ex = Exchange::new(Body::from(json!({ "n": 100 })));
    assert!(jq("reduce range(.n) as $i (0; [.])")
        .unwrap()
        .evaluate(&ex)
        .is_ok());
}

#[test]
fn a_body_nested_3000_deep_is_an_error_not_a_stack_overflow() {
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    for body in [
        Body::from(deep.clone()),
        Body::Bytes(deep.into_bytes().into()),
    ] {
        let err = jq(".").unwrap().evaluate(&Exchange::new(body)).unwrap_err();
        assert!(err.to_string().contains("deeper than 128"), "{err}");
    }
    let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(jq(".")
        .unwrap()
        .evaluate(&Exchange::new(Body::from(ok)))
        .is_ok());
}

#[test]
fn values_arrays_and_the_standard_library() {
    let ex = order();
    assert_eq!(eval(".id", &ex), json!(7));
    assert_eq!(eval(".items[].sku", &ex), json!(["a", "b"]));
    assert_eq!(eval("[.items[].qty] | add", &ex), json!(7));
    assert_eq!(
        eval(".items | map(select(.qty > 3)) | .[0].sku", &ex),
        json!("b")
    );
    assert_eq!(
        eval("{id, n: (.items | length)}", &ex),
        json!({"id": 7, "n": 2})
    );
    assert_eq!(eval(".missing", &ex), json!(null));
    assert_eq!(eval("empty", &ex), json!(null));
    assert_eq!(
        eval(".name | ascii_upcase", &Exchange::new(r#"{"name":"ada"}"#)),
        json!("ADA")
    );
    assert_eq!(eval(".", &Exchange::default()), json!(null));
}

#[test]
fn predicates_follow_select() {
    let ex = order();
    let holds = |t: &str| {
        JqLanguage
            .predicate(t, &Options::new())
            .unwrap()
            .matches(&ex)
            .unwrap()
    };
    assert!(holds(".vip"));
    assert!(holds(".items | any(.qty > 3)"));
    assert!(!holds(".items | any(.qty > 9)"));
    assert!(!holds(".missing"));
    assert!(!holds("empty"));
}

#[test]
fn errors_are_located_and_runtime_errors_typed() {
    let e = jq(".a | ").unwrap_err();
    assert_eq!(e.language, "jq");
    let e = jq(".a | nosuchfn").unwrap_err();
    assert!(e.to_string().contains("nosuchfn"), "{e}");
    assert_eq!(e.column, 6, "{e}");
    let err = jq(".a + 1")
        .unwrap()
        .evaluate(&Exchange::new(r#"{"a":"x"}"#))
        .unwrap_err();
    assert!(
        matches!(err, CamelError::Expression(ref e) if e.language == "jq"),
        "{err}"
    );
    let err = jq(".a")
        .unwrap()
        .evaluate(&Exchange::new("not json"))
        .unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
    let err = jq("repeat(1)").unwrap().evaluate(&order()).unwrap_err();
    assert!(err.to_string().contains("more than"), "{err}");
    let mut options = Options::new();
    options.insert("x".into(), true.into());
    assert!(JqLanguage.expression(".", &options).is_err());
}

#[test]
fn result_type_converts_each_output() {
    let ex = order();
    let with = |text: &str, to: &str| {
        let mut options = Options::new();
        options.insert("resultType".into(), to.into());
        JqLanguage.expression(text, &options).unwrap().evaluate(&ex)
    };
    assert_eq!(with(".id", "java.lang.String").unwrap(), Value::from("7"));
    assert_eq!(with(".vip", "String").unwrap(), Value::from("true"));
    assert_eq!(
        with(".items[].qty", "String").unwrap().to_json(),
        json!(["2", "5"])
    );
    assert_eq!(
        with(".items[0]", "String").unwrap(),
        Value::from(r#"{"qty":2,"sku":"a"}"#)
    );
    assert_eq!(with(".items[0].sku", "String").unwrap(), Value::from("a"));
    assert_eq!(with("\"12\"", "Integer").unwrap(), Value::Int(12));
    assert_eq!(with("\"TRUE\"", "Boolean").unwrap(), Value::Bool(true));
    let err = with(".items", "Integer").unwrap_err();
    assert!(err.to_string().contains("cannot convert a list"), "{err}");
    let mut options = Options::new();
    options.insert("resultType".into(), "com.acme.Order".into());
    assert!(JqLanguage.expression(".", &options).is_err());
}

#[test]
fn source_runs_on_a_header_property_or_variable() {
    let mut ex = Exchange::new("not json").with_header("doc", r#"{"n": 1}"#);
    ex.properties.insert("p", Value::from(r#"{"n": 2}"#));
    let run = |o: serde_json::Value, ex: &Exchange| {
        let options = o.as_object().cloned().unwrap_or_default();
        JqLanguage.expression(".n", &options).unwrap().evaluate(ex)
    };
    assert_eq!(
        run(json!({"source": "header:doc"}), &ex).unwrap(),
        Value::Int(1)
    );
    assert_eq!(
        run(json!({"headerName": "doc"}), &ex).unwrap(),
        Value::Int(1)
    );
    assert_eq!(
        run(json!({"source": "property:p"}), &ex).unwrap(),
        Value::Int(2)
    );
    assert_eq!(
        run(json!({"propertyName": "p"}), &ex).unwrap(),
        Value::Int(2)
    );
    let err = run(json!({"source": "header:nope"}), &ex).unwrap_err();
    assert!(
        err.to_string().contains("source header `nope` is not set"),
        "{err}"
    );
    let err = run(json!({"source": "v"}), &ex).unwrap_err();
    assert!(err.to_string().contains("variable `v`"), "{err}");
    let p = JqLanguage
        .predicate(
            ".n == 1",
            &json!({"source": "header:doc"})
                .as_object()
                .cloned()
                .unwrap(),
        )
        .unwrap();
    assert!(p.matches(&ex).unwrap());
    let bad = json!({"source": "header:"}).as_object().cloned().unwrap();
    assert!(JqLanguage.expression(".", &bad).is_err());
}

#[test]
fn halt_is_an_error_not_an_exit() {
    let err = jq("halt").unwrap().evaluate(&order()).unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
}

#[test]
fn camel_functions_read_headers_properties_and_variables() {
    let mut ex = order().with_header("region", "eu");
    ex.properties.insert("tier", "gold");
    ex.set_variable("seen", Value::from(r#"[{"id": 1}]"#));
    assert_eq!(
        eval(r#"[header("region"), property("tier"), .id]"#, &ex),
        json!(["eu", "gold", 7])
    );
    assert_eq!(
        eval(
            r#"(variable("seen") | fromjson) + [{id: .id}] | map(.id)"#,
            &ex
        ),
        json!([1, 7])
    );
    assert_eq!(
        eval(r#"[header("nope"; "none"), header("nope")]"#, &ex),
        json!(["none", null])
    );
    // Read on every run, not when compiled.
    let filter = jq(r#"header("region")"#).unwrap();
    let other = order().with_header("region", "us");
    assert_eq!(filter.evaluate(&other).unwrap().to_json(), json!("us"));
}
