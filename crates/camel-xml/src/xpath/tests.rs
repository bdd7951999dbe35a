use camel_api::{Exchange, Language, Value};
use serde_json::json;

use super::*;

fn options(value: Json) -> Map<String, Json> {
    match value {
        Json::Object(map) => map,
        _ => Map::new(),
    }
}

fn eval(text: &str, opts: Json, ex: &Exchange) -> Result<Value, CamelError> {
    XPathLanguage
        .expression(text, &options(opts))
        .unwrap()
        .evaluate(ex)
}

const ORDER: &str =
    r#"<order id="7" vip="true"><item price="2.5">book</item><item price="4">pen</item></order>"#;

#[test]
fn results_read_as_camel_reads_a_node_list() {
    let ex = Exchange::new(ORDER);
    assert_eq!(eval("/order/@id", json!({}), &ex).unwrap().to_string(), "7");
    assert_eq!(
        eval("count(//item)", json!({}), &ex).unwrap(),
        Value::Int(2)
    );
    assert_eq!(
        eval("/order/@vip = 'true'", json!({}), &ex).unwrap(),
        Value::Bool(true)
    );
    assert_eq!(
        eval("/order/item[1]", json!({}), &ex).unwrap().to_string(),
        r#"<item price="2.5">book</item>"#
    );
    assert_eq!(
        eval("//item/text()", json!({}), &ex).unwrap().to_string(),
        "bookpen"
    );
    assert_eq!(eval("/nothing", json!({}), &ex).unwrap(), Value::Null);
}

#[test]
fn result_types() {
    let ex = Exchange::new(ORDER);
    let t = |rt: &str, text: &str| eval(text, json!({"result_type": rt}), &ex).unwrap();
    assert_eq!(t("String", "/order/item").to_string(), "book");
    assert_eq!(t("java.lang.Integer", "/order/@id"), Value::Int(7));
    assert_eq!(t("Double", "sum(//item/@price)"), Value::Float(6.5));
    assert_eq!(t("Boolean", "/order/missing"), Value::Bool(false));
    // Camel's camelCase spelling of the option.
    let camel = eval("/order/@id", json!({"resultType": "Long"}), &ex).unwrap();
    assert_eq!(camel, Value::Int(7));
    let err = XPathLanguage
        .expression("/a", &options(json!({"result_type": "Date"})))
        .unwrap_err();
    assert!(err.message.contains("result_type"), "{err}");
}

#[test]
fn predicates_use_the_effective_boolean_value() {
    let ex = Exchange::new(ORDER);
    let p = |text: &str| {
        XPathLanguage
            .predicate(text, &Map::new())
            .unwrap()
            .matches(&ex)
            .unwrap()
    };
    assert!(p("/order[@vip = 'true']"));
    assert!(p("count(//item) > 1"));
    assert!(!p("/order/item[. = 'car']"));
}

#[test]
fn sources_and_namespaces() {
    let ex = Exchange::new("not xml").with_header("doc", "<a><b>in header</b></a>");
    assert_eq!(
        eval(
            "/a/b",
            json!({"source": "header:doc", "result_type": "String"}),
            &ex
        )
        .unwrap(),
        Value::Text("in header".into())
    );
    let ns = Exchange::new(r#"<c:order xmlns:c="urn:shop"><c:id>9</c:id></c:order>"#);
    let list = json!({"namespace": [{"key": "s", "value": "urn:shop"}], "result_type": "String"});
    assert_eq!(
        eval("/s:order/s:id", list, &ns).unwrap(),
        Value::Text("9".into())
    );
    let map = json!({"namespace": {"s": "urn:shop"}, "result_type": "String"});
    assert_eq!(
        eval("/s:order/s:id", map, &ns).unwrap(),
        Value::Text("9".into())
    );
}

#[test]
fn mistakes_and_hostile_documents_are_errors() {
    let err = XPathLanguage
        .expression("/order[", &Map::new())
        .unwrap_err();
    assert_eq!(err.language, "xpath");
    let err = XPathLanguage
        .expression("/a", &options(json!({"frobnicate": true})))
        .unwrap_err();
    assert!(err.message.contains("unknown option"), "{err}");
    let e = |body: &str| {
        eval("/a", json!({}), &Exchange::new(body))
            .unwrap_err()
            .to_string()
    };
    assert!(e("<a>").contains("does not parse"));
    let deep = "<a>".repeat(5000) + &"</a>".repeat(5000);
    assert!(e(&deep).contains("deeper than"));
    let bomb = r#"<!DOCTYPE a [<!ENTITY x "xxxxxxxx">]><a>&x;</a>"#;
    assert!(e(bomb).contains("DOCTYPE"));
    let err = eval("/a", json!({}), &Exchange::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty"), "{err}");
}

#[test]
fn every_thread_compiles_its_own_copy() {
    let xpath = XPathLanguage.expression("string(/a)", &Map::new()).unwrap();
    let ex = Exchange::new("<a>x</a>");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (xpath, ex) = (xpath.clone(), ex.clone());
            std::thread::spawn(move || xpath.evaluate(&ex).unwrap())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Value::Text("x".into()));
    }
}
