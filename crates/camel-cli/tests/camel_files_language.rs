//! Expression languages and data formats in the spellings Camel's own files use (Camel's
//! docs, JBang and Kaoto output), run through the binary.

mod support;

use support::{run_yaml as run, validate_yaml as validate};

#[test]
fn the_generic_language_wrapper_stands_where_a_language_key_may() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:wrap
      parameters: {period: 10, repeatCount: 2}
      steps:
        - setBody:
            expression:
              language:
                language: simple
                expression: "n=${header.CamelTimerCounter}"
        - setHeader:
            name: kind
            language: {language: constant, expression: wrapped}
        - filter:
            language: {language: simple, expression: "${header.CamelTimerCounter} == 2"}
            steps:
              - log: "second ${body} ${header.kind}"
        - log: "each ${body} ${header.kind}"
"#,
        "2",
    );
    assert!(log.contains("each n=1 wrapped"), "{log}");
    assert!(log.contains("each n=2 wrapped"), "{log}");
    assert_eq!(log.matches("second n=2 wrapped").count(), 1, "{log}");
    assert!(!log.contains("second n=1"), "{log}");
}

#[test]
fn a_jvm_language_in_the_wrapper_is_refused_by_its_name() {
    let (ok, all) = validate(
        r#"
- route:
    from:
      uri: timer:jvm
      steps:
        - setBody:
            expression:
              language:
                language: groovy
                expression: "request.body.toUpperCase()"
        - setHeader:
            name: x
            language: {language: js, expression: "1 + 1"}
"#,
    );
    assert!(!ok, "{all}");
    assert!(all.contains("`groovy`") && all.contains("JVM"), "{all}");
    assert!(all.contains("`js`"), "{all}");
    // Located at the wrapper's expression.
    assert!(all.contains("route.camel.yaml:10:"), "{all}");
}

#[test]
fn constant_null_and_trim() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:trim
      parameters: {period: 10, repeatCount: 1}
      steps:
        - setBody: {constant: "  padded  "}
        - log: "trimmed [${body}]"
        - setBody:
            constant: {expression: "  kept  ", trim: false}
        - log: "kept [${body}]"
        - setBody:
            simple: |
              block ${header.CamelTimerCounter}
        - log: "block [${body}]"
        - setHeader: {name: gone, constant: null}
        - setBody: {constant: null}
        - log: "null [${body}] [${header.gone}] [${kindOfType(${header.gone})}]"
        - setHeader:
            name: typed
            constant: {expression: "42", resultType: java.lang.Integer}
        - log: "typed ${kindOfType(${header.typed})} ${header.typed}"
"#,
        "1",
    );
    assert!(log.contains("trimmed [padded]"), "{log}");
    assert!(log.contains("kept [  kept  ]"), "{log}");
    assert!(log.contains("block [block 1]"), "{log}");
    assert!(log.contains("null [] [] [null]"), "{log}");
    assert!(log.contains("typed number 42"), "{log}");
}

#[test]
fn jq_and_jsonpath_options() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:json
      parameters: {period: 10, repeatCount: 1}
      steps:
        - setBody:
            constant: '{"id": 7, "name": "ann", "tags": ["a", "b"], "v": 1}'
        - setHeader:
            name: idText
            jq: {expression: ".id", resultType: java.lang.String}
        - setHeader:
            name: missing
            jsonpath: {expression: "$.nope", suppressExceptions: true}
        - setHeader:
            name: tags
            jsonpath: {expression: "$.tags", writeAsString: true}
        - setHeader:
            name: count
            jsonpath: {expression: "$.v", resultType: Integer}
        - setHeader:
            name: v
            jsonpath: "$.v"
        - setHeader: {name: doc, constant: '{"who": "ann"}'}
        - setHeader:
            name: who
            jq: {expression: ".who", source: "header:doc"}
        - setHeader:
            name: bs
            jsonpath: "$.tags[?(@ == 'b')]"
        - log: "filtered ${header.bs} ${kindOfType(${header.bs})}"
        - setHeader:
            name: who2
            jsonpath: {expression: "$.who", headerName: doc}
        - log: "jq=${header.idText} ${kindOfType(${header.idText})} missing=[${header.missing}] tags=${header.tags} count=${kindOfType(${header.count})} v=${kindOfType(${header.v})} who=${header.who}/${header.who2}"
"#,
        "1",
    );
    assert!(log.contains("jq=7 string"), "{log}");
    assert!(log.contains("missing=[]"), "{log}");
    assert!(log.contains(r#"tags=["\"a\"","\"b\""]"#), "{log}");
    assert!(log.contains("count=number"), "{log}");
    // A jsonpath result keeps its JSON type.
    assert!(log.contains("v=number"), "{log}");
    assert!(log.contains("who=ann/ann"), "{log}");
    // A filter yields a list even of one match, as Camel's.
    assert!(log.contains(r#"filtered ["b"] array"#), "{log}");
    let (ok, all) = validate(
        r#"
- route:
    from:
      uri: timer:json
      steps:
        - setHeader:
            name: x
            jq: {expression: ".id", resultType: com.acme.Order}
"#,
    );
    assert!(!ok && all.contains("unknown result type `Order`"), "{all}");
}

#[test]
fn simple_jq_and_header_as_functions() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:fn
      parameters: {period: 10, repeatCount: 1}
      steps:
        - setBody:
            constant: '{"order": {"id": 7, "lines": [1, 2, 3]}}'
        - setHeader: {name: doc, constant: '{"who": "ann"}'}
        - setHeader: {name: n, constant: "41"}
        - log: "id=${jq(.order.id)} sum=${jq(.order.lines | add)} who=${jq(header:doc,.who)} n=${kindOfType(${headerAs(n,Integer)})}"
        - filter:
            simple: "${headerAs(n, java.lang.Integer)} > 40"
            steps:
              - log: "big ${jsonpath(header:doc,$.who)}"
"#,
        "1",
    );
    assert!(log.contains("id=7 sum=6 who=ann n=number"), "{log}");
    assert!(log.contains("big ann"), "{log}");
}

#[test]
fn functions_inside_quoted_literals_are_filled_in() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:quotes
      parameters: {period: 10, repeatCount: 2}
      steps:
        - setHeader: {name: want, constant: "ping-2"}
        - setBody: {simple: "ping-${header.CamelTimerCounter}"}
        - choice:
            when:
              - simple: "${body} == '${header.want}'"
                steps:
                  - log: "matched ${body}"
            otherwise:
              steps:
                - log: "other ${body}"
        - setBody: {simple: "'${date:now:yyyy'-'MM}'"}
        - log: "stamp ${body}"
        - log: "${concat('tick-${header.CamelTimerCounter}','!')}"
"#,
        "2",
    );
    assert!(log.contains("other ping-1"), "{log}");
    assert!(log.contains("matched ping-2"), "{log}");
    assert!(!log.contains("matched ping-1"), "{log}");
    assert!(log.contains("stamp '2"), "{log}");
    assert!(log.contains("tick-1!") && log.contains("tick-2!"), "{log}");
    assert!(!log.contains("${date"), "{log}");
}

#[test]
fn json_use_list_and_csv_header_text() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:formats
      parameters: {period: 10, repeatCount: 1}
      steps:
        - setBody: {constant: '[{"a": 1}, {"a": 2}]'}
        - unmarshal:
            json: {library: Jackson, useList: true}
        - log: "list of ${size()}"
        - setBody: {constant: "1,ann\n2,bob"}
        - unmarshal:
            csv: {header: "id,name"}
        - split:
            simple: "${body}"
            steps:
              - log: "row ${body[id]}=${body[name]}"
        - setBody: {constant: "id,,name\n1,x,cy"}
        - unmarshal:
            csv: {useMaps: true, allowMissingColumnNames: true}
        - log: "maps ${body}"
"#,
        "1",
    );
    assert!(log.contains("list of 2"), "{log}");
    assert!(
        log.contains("row 1=ann") && log.contains("row 2=bob"),
        "{log}"
    );
    assert!(log.contains(r#"maps [{"id":"1","name":"cy"}]"#), "{log}");
}
