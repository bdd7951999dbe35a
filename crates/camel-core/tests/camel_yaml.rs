//! Camel YAML as Camel's own tools write it: endpoint paths in `parameters`, node ids and
//! `disabled` on steps and expressions, several documents, Camel K resources, and Camel
//! names camel-rs lacks reported as such (ADR 0051).

use camel_api::Exchange;
use camel_core::{CamelContext, RouteDefinition, RouteErrorKind, RouteErrors};

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn errors_of(text: &str) -> RouteErrors {
    let routes = match camel_core::yaml::load_str(text, "routes.yaml") {
        Ok(r) => r,
        Err(e) => return e,
    };
    CamelContext::new()
        .validate(&routes)
        .await
        .expect_err("the file should not validate")
}

async fn run(text: &str, uri: &str) -> String {
    let ctx = CamelContext::new();
    ctx.add_routes(load(text))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    let out = ctx.request(uri, Exchange::default()).await.unwrap();
    ctx.stop().await;
    out.message.body.as_text().unwrap_or_default().into_owned()
}

#[tokio::test]
async fn endpoint_paths_in_parameters_as_kaoto_writes_them() {
    let text = "\
- route:
    id: kaoto
    from:
      id: from-1
      uri: direct
      parameters:
        name: start
      steps:
        - setBody:
            id: set-1
            simple:
              expression: hello
              id: simple-1
        - to:
            id: to-1
            uri: direct
            parameters:
              name: next
- route:
    from:
      uri: direct
      parameters: {name: next}
      steps:
        - setBody: {simple: '${body} world'}
        - to: {uri: log, parameters: {loggerName: out, showHeaders: true}}
";
    assert_eq!(run(text, "direct:start").await, "hello world");
}

#[tokio::test]
async fn disabled_steps_are_left_out_and_descriptions_accepted() {
    let text = "\
- from:
    uri: direct:a
    description: the consumer
    steps:
      - setBody: {constant: kept, description: sets the body}
      - setBody: {constant: dropped, disabled: true}
      - filter:
          id: never
          simple: '${body} == \"x\"'
          steps:
            - setBody: {constant: filtered, id: inner}
";
    assert_eq!(run(text, "direct:a").await, "kept");
}

#[tokio::test]
async fn a_step_id_names_the_step_in_errors() {
    let errs = errors_of(
        "- from:\n    uri: direct:a\n    steps:\n      - setHeader: {id: tag, nmae: x, constant: y}\n",
    )
    .await;
    // Echoed in the file's spelling.
    assert_eq!(errs.0[0].step.as_deref(), Some("steps[0].setHeader#tag"));
    assert_eq!(errs.0[0].location.as_ref().map(|l| l.line), Some(4));
}

#[tokio::test]
async fn several_documents_and_a_jbang_first_line() {
    let text = "\
#!/usr/bin/env jbang camel@apache/camel run
# camel-k: language=yaml
- from:
    uri: direct:one
    steps:
      - setBody: {constant: one}
---
- from:
    uri: direct:two
    steps:
      - setBody: {constant: two}
      - bogus_step: {}
";
    let errs = errors_of(text).await;
    assert_eq!(errs.0.len(), 1, "{errs}");
    // Positions restart with the second document but are still the file's lines.
    assert_eq!(
        errs.0[0].location.as_ref().map(|l| l.line),
        Some(12),
        "{errs}"
    );
    let ok = text.replace("      - bogus_step: {}\n", "");
    assert_eq!(load(&ok).len(), 2);
    assert_eq!(run(&ok, "direct:two").await, "two");
}

#[tokio::test]
async fn camel_k_integration_and_pipe() {
    let integration = "\
apiVersion: camel.apache.org/v1
kind: Integration
metadata:
  name: hello
spec:
  flows:
    - from:
        uri: direct:k
        steps:
          - setBody: {constant: from camel k}
";
    assert_eq!(run(integration, "direct:k").await, "from camel k");
    let pipe = "\
apiVersion: camel.apache.org/v1
kind: Pipe
metadata:
  name: pipe-1
spec:
  source:
    uri: direct:p
  steps:
    - uri: log:step
  sink:
    uri: mock:sink
";
    let routes = load(pipe);
    assert_eq!(routes[0].id.as_deref(), Some("pipe-1"));
    assert_eq!(routes[0].steps.len(), 2);
    CamelContext::new().validate(&routes).await.unwrap();
    let kamelet = pipe.replace(
        "  source:\n    uri: direct:p\n",
        "  source:\n    ref:\n      kind: Kamelet\n      name: timer-source\n",
    );
    // The built-in `timer-source` needs its `message`: said at the reference, with the
    // parameter's description.
    let err = camel_core::yaml::load_str(&kamelet, "pipe.yaml").unwrap_err();
    assert!(
        err.to_string().contains(
            "Kamelet `timer-source` needs the parameter `message` (The body of each message.)"
        ),
        "{err}"
    );
    assert_eq!(err.0[0].location.as_ref().map(|l| l.line), Some(7), "{err}");
    let other = pipe.replace(
        "  source:\n    uri: direct:p\n",
        "  source:\n    ref:\n      kind: Broker\n      name: default\n",
    );
    let err = camel_core::yaml::load_str(&other, "pipe.yaml").unwrap_err();
    assert!(
        err.to_string()
            .contains("a Pipe `ref` to a `Broker` is not supported"),
        "{err}"
    );
}

/// A file with five mistakes, each of another kind.
fn text_of_five() -> &'static str {
    "\
- beans:
    - name: greeter
      type: com.example.Greeter
- route:
    idd: r1
    from:
      uri: direct:a
      steps:
        - saga: {}
        - setBody: {groovy: x}
- from:
    uri: direct:b
  steps:
    - log: hi
"
}

#[tokio::test]
async fn five_errors_in_one_file_are_five_located_errors() {
    let errs = errors_of(text_of_five()).await;
    let text = errs.to_string();
    // The loader finds all of these at once; nothing inside a route is hidden by a bad
    // top-level item or by the route's first mistake.
    let lines: Vec<usize> = errs
        .0
        .iter()
        .filter_map(|e| e.location.as_ref().map(|l| l.line))
        .collect();
    // A bean's type is checked against the bean types registered in Rust when the routes
    // are compiled (ADR 0076), so line 3 comes with the compiler's errors below.
    assert_eq!(lines, [5, 13], "{text}");
    // With the loader's mistakes fixed, the compiler reports every step's.
    let fixed = errors_of("- from:\n    uri: direct:a\n    steps:\n      - saga: {}\n      - setBody: {groovy: x}\n      - setHeader: {nmae: x, constant: y}\n      - to: kafka:t\n      - bogus: {}\n").await;
    let lines: Vec<usize> = fixed
        .0
        .iter()
        .filter_map(|e| e.location.as_ref().map(|l| l.line))
        .collect();
    assert_eq!(lines, [4, 5, 6, 7, 8], "{fixed}");
    assert!(text.contains("indent `steps` under `from`"), "{text}");
    // What `camel validate` does: the routes read whole are compiled too, so the errors
    // inside the route with a bad option are found in the same run.
    let (routes, mut all) = camel_core::yaml::load_str_partial(text_of_five(), "routes.yaml");
    if let Err(e) = CamelContext::new().validate(&routes).await {
        all.extend(e.0);
    }
    let mut lines: Vec<usize> = all
        .iter()
        .filter_map(|e| e.location.as_ref().map(|l| l.line))
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, [3, 5, 9, 10, 13], "{}", RouteErrors(all.clone()));
    let all = RouteErrors(all).to_string();
    assert!(all.contains("Java classes cannot run here"), "{all}");
}

#[tokio::test]
async fn an_unsupported_step_is_named_as_the_file_spells_it() {
    let text = "\
- from:
    uri: direct:a
    steps:
      - transformDataType: {toType: aws2-ddb:application-json}
      - choice:
          when:
            - simple: ${body} == 'x'
              steps:
                - serviceCall: {name: s}
";
    let text = errors_of(text).await.to_string();
    assert!(
        text.contains("`transformDataType` is a Camel EIP that camel-rs does not support yet"),
        "{text}"
    );
    assert!(
        text.contains("`serviceCall` is a Camel EIP that camel-rs does not support yet"),
        "{text}"
    );
    assert!(!text.contains("transform_data_type"), "{text}");
}

#[tokio::test]
async fn a_groovy_script_step_is_refused_for_its_language() {
    let text = "\
- from:
    uri: direct:a
    steps:
      - script:
          expression:
            groovy:
              expression: exchange.in.body = 'x'
      - script:
          groovy: exchange.in.body = 'y'
";
    let text = errors_of(text).await.to_string();
    assert_eq!(
        text.matches("`groovy` is a Camel language that runs JVM code")
            .count(),
        2,
        "{text}"
    );
    assert!(!text.contains("`script` is a Camel EIP"), "{text}");
}

#[tokio::test]
async fn every_step_error_of_every_route_is_reported() {
    let text = "\
- from:
    uri: direct:a
    steps:
      - saga: {}
      - setBody: {groovy: x}
      - kafka_step: {}
- from:
    uri: kafka:orders
";
    let errs = errors_of(text).await;
    let text = errs.to_string();
    assert!(
        text.contains("`saga` is a Camel EIP that camel-rs does not support yet"),
        "{text}"
    );
    assert!(text.contains("`kafka` is a Camel component"), "{text}");
    assert!(
        errs.0.iter().any(
            |e| matches!(&e.kind, RouteErrorKind::UnknownKey { key, .. } if key == "kafka_step")
        ),
        "{text}"
    );
}

#[tokio::test]
async fn unsupported_languages_and_top_level_items_are_named() {
    let errs = errors_of(
        "- from:\n    uri: direct:a\n    steps:\n      - setBody: {expression: {groovy: x}}\n",
    )
    .await;
    assert!(errs.to_string().contains("runs JVM code"), "{errs}");
    let errs = errors_of("- dataFormats:\n    - json: {}\n").await;
    assert!(
        errs.to_string()
            .contains("is a Camel top-level construct that camel-rs does not support yet"),
        "{errs}"
    );
    // A true unknown stays an unknown key.
    let errs = errors_of("- rouet:\n    from: direct:a\n").await;
    assert!(
        matches!(&errs.0[0].kind, RouteErrorKind::UnknownKey { suggestion: Some(s), .. } if s == "route"),
        "{errs}"
    );
}

#[tokio::test]
async fn jvm_only_options_and_route_options_are_accepted() {
    let text = "\
- route:
    id: r
    nodePrefixId: n
    group: g
    from:
      uri: timer
      parameters:
        timerName: tick
        repeatCount: 1
        bridgeErrorHandler: true
      steps:
        - to: {uri: 'direct:x?lazyStartProducer=true'}
- from: {uri: direct:x}
";
    CamelContext::new().validate(&load(text)).await.unwrap();
    let errs = errors_of("- route:\n    inputType: p\n    from: {uri: direct:a}\n").await;
    assert!(
        errs.to_string()
            .contains("`inputType` is a Camel route option"),
        "{errs}"
    );
}

#[tokio::test]
async fn ids_on_the_parts_of_a_step_as_kaoto_writes_them() {
    // `when` clauses, `otherwise` and data formats carry ids too; nested steps keep theirs.
    let text = r#"- route:
    id: route-1
    from:
      id: from-1
      uri: direct
      parameters:
        name: in
      steps:
        - choice:
            id: choice-1
            when:
              - id: when-1
                expression:
                  simple:
                    expression: ${header.x} == 1
                    id: s1
                steps:
                  - log:
                      id: log-1
                      message: one
            otherwise:
              id: otherwise-1
              steps:
                - log:
                    id: log-2
                    message: other
        - filter:
            id: filter-1
            expression:
              simple:
                expression: ${body} != null
            steps:
              - to:
                  id: to-1
                  uri: mock
                  parameters:
                    name: out
        - marshal:
            id: marshal-1
            json:
              id: json-1
              library: Jackson
        - convertBodyTo:
            id: c1
            type: java.lang.String
        - removeHeaders:
            id: rh
            pattern: "*"
"#;
    let routes = load(text);
    CamelContext::new().validate(&routes).await.unwrap();
    let broken = text.replace("message: other", "mesage: other");
    let errs = errors_of(&broken).await;
    assert_eq!(
        errs.0[0].step.as_deref(),
        Some("steps[0].choice#choice-1.otherwise.steps[0].log#log-2"),
        "{errs}"
    );
}

#[tokio::test]
async fn the_builder_resolves_a_path_given_as_a_parameter() {
    use camel_core::builder::RouteBuilder;
    use camel_core::EndpointDefinition;
    let route = RouteBuilder::from("direct:b")
        .to_endpoint(EndpointDefinition::new("direct").parameter("name", "c"))
        .build();
    let target =
        load("- from:\n    uri: direct:c\n    steps:\n      - setBody: {constant: reached}\n");
    let ctx = CamelContext::new();
    ctx.add_routes(vec![route]).await.unwrap();
    ctx.add_routes(target).await.unwrap();
    ctx.start().await.unwrap();
    let out = ctx.request("direct:b", Exchange::default()).await.unwrap();
    ctx.stop().await;
    assert_eq!(out.message.body.as_text().unwrap_or_default(), "reached");
}
