use super::*;
use serde_json::json;

fn order() -> Exchange {
    Exchange::new(Body::from(json!({
        "id": 7,
        "vip": true,
        "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 5}]
    })))
}

#[test]
fn one_match_is_that_value() {
    let ex = order();
    assert_eq!(
        jsonpath("$.id", false).unwrap().evaluate(&ex).unwrap(),
        Value::Int(7)
    );
    assert_eq!(
        jsonpath("$.items[0].sku", false)
            .unwrap()
            .evaluate(&ex)
            .unwrap(),
        Value::from("a")
    );
    let item = jsonpath("$.items[1]", false)
        .unwrap()
        .evaluate(&ex)
        .unwrap();
    assert_eq!(item.to_json(), json!({"sku": "b", "qty": 5}));
}

#[test]
fn a_path_that_may_name_several_nodes_is_always_a_list() {
    let ex = order();
    let value = |t: &str| jsonpath(t, false).unwrap().evaluate(&ex).unwrap().to_json();
    assert_eq!(value("$.items[?@.qty > 3].sku"), json!(["b"]));
    assert_eq!(value("$.items[?@.qty > 9]"), json!([]));
    assert_eq!(value("$..sku"), json!(["a", "b"]));
    assert_eq!(value("$.items[0:1].qty"), json!([2]));
    assert_eq!(value("$['items'][1]['sku']"), json!("b"));
    assert!(is_definite("$.a['x,y:*?'][0]"));
    assert!(!is_definite("$.a[0,1]"));
    assert!(!is_definite("$.a.*"));
}

#[test]
fn several_matches_are_an_array() {
    let skus = jsonpath("$.items[*].sku", false)
        .unwrap()
        .evaluate(&order())
        .unwrap();
    assert_eq!(skus.to_json(), json!(["a", "b"]));
}

#[test]
fn no_match_is_an_error_unless_suppressed() {
    let ex = order();
    let err = jsonpath("$.missing", false)
        .unwrap()
        .evaluate(&ex)
        .unwrap_err();
    assert!(
        matches!(err, CamelError::Expression(ref e) if e.language == "jsonpath"),
        "{err}"
    );
    assert_eq!(
        jsonpath("$.missing", true).unwrap().evaluate(&ex).unwrap(),
        Value::Null
    );
}

#[test]
fn text_and_bytes_bodies_are_parsed() {
    let text = Exchange::new(r#"{"a": [1, 2]}"#);
    assert_eq!(
        jsonpath("$.a[1]", false).unwrap().evaluate(&text).unwrap(),
        Value::Int(2)
    );
    let bytes = Exchange::new(Body::from(br#"{"a": "x"}"#.to_vec()));
    assert_eq!(
        jsonpath("$.a", false).unwrap().evaluate(&bytes).unwrap(),
        Value::from("x")
    );
}

#[test]
fn bodies_that_are_not_json() {
    let text = Exchange::new("not json");
    let err = jsonpath("$.a", false).unwrap().evaluate(&text).unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
    assert_eq!(
        jsonpath("$.a", true).unwrap().evaluate(&text).unwrap(),
        Value::Null
    );
    let empty = Exchange::default();
    assert!(jsonpath("$.a", false).unwrap().evaluate(&empty).is_err());
    assert_eq!(
        jsonpath("$.a", true).unwrap().evaluate(&empty).unwrap(),
        Value::Null
    );
}

#[test]
fn bad_paths_report_their_column() {
    let err = jsonpath("$.a[", false).unwrap_err();
    assert_eq!(err.language, "jsonpath");
    assert_eq!(err.column, 4, "{err}");
    let err = jsonpath("  nope", false).unwrap_err();
    assert_eq!(err.column, 3, "{err}");
}

#[test]
fn predicates_hold_on_a_match_or_a_true_value() {
    let ex = order();
    let options = Options::new();
    let holds = |text: &str| {
        JsonPathLanguage
            .predicate(text, &options)
            .unwrap()
            .matches(&ex)
            .unwrap()
    };
    assert!(holds("$.items[?@.qty > 3]"));
    assert!(!holds("$.items[?@.qty > 9]"));
    assert!(holds("$.vip"));
    assert!(!holds("$.missing"));
    let not_json = Exchange::new("x");
    assert!(JsonPathLanguage
        .predicate("$.a", &options)
        .unwrap()
        .matches(&not_json)
        .is_err());
}

fn with(options: serde_json::Value) -> Options {
    options.as_object().cloned().unwrap_or_default()
}

fn eval(text: &str, options: serde_json::Value) -> Result<Value, CamelError> {
    JsonPathLanguage
        .expression(text, &with(options))
        .unwrap()
        .evaluate(&order())
}

#[test]
fn results_keep_their_json_type() {
    assert_eq!(eval("$.id", json!({})).unwrap().to_json(), json!(7));
    assert_eq!(eval("$.vip", json!({})).unwrap().to_json(), json!(true));
    assert_eq!(eval("$.items[1].qty", json!({})).unwrap(), Value::Int(5));
}

#[test]
fn write_as_string_writes_each_element_as_json_text() {
    let w = json!({"writeAsString": true});
    assert_eq!(
        eval("$.items", w.clone()).unwrap().to_json(),
        json!([r#"{"qty":2,"sku":"a"}"#, r#"{"qty":5,"sku":"b"}"#])
    );
    assert_eq!(
        eval("$.items[0]", w.clone()).unwrap().to_json(),
        json!({"qty": "2", "sku": r#""a""#})
    );
    // A single string keeps its quotes, as Jackson writes it.
    assert_eq!(
        eval("$.items[0].sku", w.clone()).unwrap(),
        Value::from(r#""a""#)
    );
    assert_eq!(eval("$.id", w).unwrap(), Value::from("7"));
}

#[test]
fn result_type_and_unpack_array() {
    assert_eq!(
        eval("$.id", json!({"resultType": "String"})).unwrap(),
        Value::from("7")
    );
    assert_eq!(
        eval("$.id", json!({"result_type": "java.util.List"}))
            .unwrap()
            .to_json(),
        json!([7])
    );
    let one = json!({"resultType": "Integer", "unpackArray": true});
    assert_eq!(
        eval("$.items[?@.qty > 3].qty", one.clone()).unwrap(),
        Value::Int(5)
    );
    // Two matches are an array, which no unpacking makes an integer.
    assert!(eval("$.items[*].qty", one).is_err());
    let err = eval("$.items", json!({"resultType": "Integer"})).unwrap_err();
    assert!(err.to_string().contains("cannot convert a list"), "{err}");
    // Suppressed: a missing path is null, whatever the result type.
    let none = json!({"suppressExceptions": true, "resultType": "Integer"});
    assert_eq!(eval("$.nope", none).unwrap(), Value::Null);
    assert!(JsonPathLanguage
        .expression("$", &with(json!({"resultType": "Order"})))
        .is_err());
}

#[test]
fn source_reads_another_document() {
    let ex = Exchange::new("not json").with_header("doc", r#"{"a": [1, 2]}"#);
    let with_source = |o: serde_json::Value| {
        JsonPathLanguage
            .expression("$.a[1]", &with(o))
            .unwrap()
            .evaluate(&ex)
    };
    assert_eq!(
        with_source(json!({"source": "header:doc"})).unwrap(),
        Value::Int(2)
    );
    assert_eq!(
        with_source(json!({"headerName": "doc"})).unwrap(),
        Value::Int(2)
    );
    assert!(with_source(json!({"source": "header:x"})).is_err());
    let quiet = json!({"source": "header:x", "suppressExceptions": true});
    assert_eq!(with_source(quiet).unwrap(), Value::Null);
    let p = JsonPathLanguage
        .predicate("$.a", &with(json!({"source": "header:doc"})))
        .unwrap();
    assert!(p.matches(&ex).unwrap());
}

#[test]
fn the_language_reads_suppress_exceptions() {
    let ex = order();
    let mut options = Options::new();
    options.insert("suppress_exceptions".into(), true.into());
    let e = JsonPathLanguage.expression("$.missing", &options).unwrap();
    assert_eq!(e.evaluate(&ex).unwrap(), Value::Null);
    let mut options = Options::new();
    options.insert("suppress".into(), true.into());
    assert!(JsonPathLanguage.expression("$.missing", &options).is_err());
}
