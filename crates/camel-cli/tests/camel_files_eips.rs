//! EIP options in the spellings Camel's own files use (Camel JBang examples, Kaoto output,
//! Camel's docs), run through the binary.

mod support;

use support::{run_yaml as run, validate_yaml as validate};

#[test]
fn quoted_booleans_and_numbers_are_read_as_camel_reads_them() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:quoted
      parameters: {period: 10, repeatCount: 4}
      steps:
        - setBody: {simple: "${header.CamelTimerCounter}"}
        - aggregate:
            correlationExpression: {constant: all}
            aggregationStrategy: string
            completionSize: "2"
            steps:
              - log: "batch ${body}"
- route:
    from:
      uri: timer:split
      parameters: {period: 10, repeatCount: "2"}
      steps:
        - split:
            simple: "a,b"
            parallelProcessing: "true"
            stopOnException: "false"
            steps:
              - log: "part ${body}"
"#,
        "6",
    );
    assert_eq!(log.matches("batch ").count(), 2, "{log}");
    assert_eq!(log.matches("part a").count(), 2, "{log}");
}

#[test]
fn quoted_text_that_is_no_value_is_a_located_error() {
    let (ok, all) = validate(
        r#"
- from:
    uri: direct:a
    steps:
      - split:
          simple: "${body}"
          parallelProcessing: "sometimes"
          steps: [{to: log:x}]
      - aggregate:
          correlationExpression: {constant: all}
          aggregationStrategy: string
          completionSize: "two"
"#,
    );
    assert!(!ok, "{all}");
    assert!(all.contains("route.camel.yaml:7:"), "{all}");
    assert!(
        all.contains("`sometimes` is not `true` or `false`"),
        "{all}"
    );
    assert!(all.contains("route.camel.yaml:12:"), "{all}");
    assert!(all.contains("`two` is not a whole number"), "{all}");
    assert!(!all.contains("invalid type"), "{all}");
}

#[test]
fn set_headers_sets_each_header_in_order() {
    let log = run(
        r#"
- from:
    uri: timer:headers
    parameters: {repeatCount: 1}
    steps:
      - setHeaders:
          headers:
            - name: customer
              constant: ACME
            - name: greeting
              simple: "Hello ${header.customer}"
            - name: total
              expression: {simple: "${header.CamelTimerCounter}"}
      - log: "${header.greeting} / ${header.total}"
"#,
        "1",
    );
    assert!(log.contains("Hello ACME / 1"), "{log}");
}

#[test]
fn switch_and_do_switch_route_like_choice() {
    for step in ["switch", "doSwitch"] {
        let log = run(
            &format!(
                r#"
- from:
    uri: timer:switch
    parameters: {{repeatCount: 2}}
    steps:
      - {step}:
          when:
            - simple: "${{header.CamelTimerCounter}} == 1"
              steps: [{{log: "first via {step}"}}]
          otherwise:
            steps: [{{log: "later via {step}"}}]
"#
            ),
            "2",
        );
        assert!(log.contains(&format!("first via {step}")), "{log}");
        assert!(log.contains(&format!("later via {step}")), "{log}");
    }
    // Camel 4.23's table form is named as not supported, not as a typo.
    let (ok, all) = validate(
        r#"
- from:
    uri: direct:a
    steps:
      - switch:
          selector: {simple: "${header.department}"}
          case:
            - {value: billing, uri: direct:billing}
"#,
    );
    assert!(!ok, "{all}");
    assert!(all.contains("route.camel.yaml:6:"), "{all}");
    assert!(all.contains("camel-rs does not support yet"), "{all}");
}

#[test]
fn on_exception_among_a_routes_steps_is_the_routes_clause() {
    let log = run(
        r#"
- route:
    id: guarded
    from:
      uri: timer:guarded
      parameters: {repeatCount: 1}
      steps:
        - onException:
            exception: [java.lang.IllegalStateException]
            handled: {constant: true}
            onWhen: {expression: {simple: "${exception.message} contains 'boom'"}}
            steps:
              - log: "handled in route: ${exception.message}"
        - throwException: {exceptionType: java.lang.IllegalStateException, message: boom}
"#,
        "1",
    );
    assert!(log.contains("handled in route: boom"), "{log}");
}

#[test]
fn predicates_wrapped_in_expression_everywhere() {
    let log = run(
        r#"
- from:
    uri: timer:wrapped
    parameters: {repeatCount: 2}
    steps:
      - filter:
          expression: {simple: "${header.CamelTimerCounter} > 0"}
          steps: [{log: "filtered ${header.CamelTimerCounter}"}]
      - choice:
          when:
            - expression: {simple: "${header.CamelTimerCounter} == 2"}
              steps: [{log: "chose two"}]
      - doTry:
          steps:
            - throwException: {exceptionType: java.io.IOException, message: "io ${header.CamelTimerCounter}"}
          doCatch:
            - exception: [java.io.IOException]
              onWhen: {expression: {simple: "${header.CamelTimerCounter} == 1"}}
              steps: [{log: "caught first: ${exception.message}"}]
            - exception: [java.lang.Exception]
              steps: [{log: "caught other: ${exception.message}"}]
"#,
        "2",
    );
    assert!(
        log.contains("filtered 1") && log.contains("filtered 2"),
        "{log}"
    );
    assert_eq!(log.matches("chose two").count(), 1, "{log}");
    assert!(log.contains("caught first: io 1"), "{log}");
    assert!(log.contains("caught other: io 2"), "{log}");
}

#[test]
fn kaoto_do_try_with_catch_and_finally_in_its_steps_and_a_catch_without_a_list() {
    let log = run(
        r#"
- route:
    id: kaoto
    from:
      id: from-1
      uri: timer:kaoto
      parameters: {repeatCount: 1}
      steps:
        - doTry:
            id: doTry-1
            steps:
              - throwException:
                  id: throw-1
                  exceptionType: java.lang.IllegalArgumentException
                  message: refused
              - doCatch:
                  id: doCatch-1
                  description: catches everything
                  steps:
                    - log: "caught without a list: ${exception.message}"
              - doFinally:
                  id: doFinally-1
                  steps:
                    - log: "finally ran"
"#,
        "1",
    );
    assert!(log.contains("caught without a list: refused"), "{log}");
    assert!(log.contains("finally ran"), "{log}");
}

#[test]
fn split_delimiter_cuts_text_and_false_keeps_it_whole() {
    let log = run(
        r#"
- from:
    uri: timer:delimited
    parameters: {repeatCount: 1}
    description: the consumer
    steps:
      - setBody: {constant: "a;b;c", description: a body to cut}
      - split:
          description: cut at semicolons
          simple: "${body}"
          delimiter: ";"
          steps:
            - log: "cut ${body}"
      - split:
          simple: "${body}"
          delimiter: false
          steps:
            - log: "whole ${body}"
      - choice:
          description: a choice
          when:
            - description: the only branch
              simple: "${body} == 'a;b;c'"
              steps: [{log: "described branch"}]
          otherwise:
            description: the other branch
            steps: [{log: never}]
"#,
        "1",
    );
    for part in ["cut a", "cut b", "cut c", "whole a;b;c", "described branch"] {
        assert!(log.contains(part), "{part}: {log}");
    }
    assert!(!log.contains("cut a;b"), "{log}");
}

#[test]
fn dead_letter_channel_level_sets_the_level_of_its_exhausted_line() {
    let log = run(
        r#"
- route:
    id: warned
    errorHandler:
      deadLetterChannel:
        deadLetterUri: log:dead
        level: WARN
        redeliveryPolicy: {maximumRedeliveries: "0"}
    from:
      uri: timer:warned
      parameters: {repeatCount: 1}
      steps:
        - throwException: {exceptionType: java.lang.IllegalStateException, message: warned}
- route:
    id: silent
    errorHandler:
      deadLetterChannel:
        deadLetterUri: log:dead
        level: "OFF"
    from:
      uri: timer:silent
      parameters: {repeatCount: 1}
      steps:
        - throwException: {exceptionType: java.lang.IllegalStateException, message: silent}
"#,
        "2",
    );
    let exhausted: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("redeliveries exhausted"))
        .collect();
    assert_eq!(exhausted.len(), 1, "{log}");
    assert!(exhausted[0].contains(" WARN "), "{log}");
    assert!(exhausted[0].contains("warned"), "{log}");
    let (ok, all) = validate(
        r#"
- route:
    errorHandler:
      deadLetterChannel: {deadLetterUri: log:dead, level: LOUD}
    from: {uri: direct:a, steps: [{to: log:x}]}
"#,
    );
    assert!(!ok, "{all}");
    assert!(all.contains("unknown level `LOUD`"), "{all}");
}

#[test]
fn variable_send_and_receive_on_to_and_variable_receive_on_from() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:vars
      parameters: {repeatCount: 1}
      steps:
        - setBody: {constant: order-1}
        - setHeader: {name: kind, constant: gold}
        - setVariable: {name: item, constant: widget}
        - to:
            uri: direct:lookup
            variableSend: item
            variableReceive: price
        - log: "main: ${body} ${header.kind} / ${variable.price}"
        - to: direct:store
- route:
    from:
      uri: direct:lookup
      steps:
        - setBody: {simple: "price of ${body} for ${header.kind}"}
        - setHeader: {name: kind, constant: changed}
- route:
    from:
      uri: direct:store
      variableReceive: incoming
      steps:
        - log: "store: body=[${body}] received=${variable.incoming}"
"#,
        "1",
    );
    assert!(
        log.contains("main: order-1 gold / price of widget for gold"),
        "{log}"
    );
    assert!(log.contains("store: body=[] received=order-1"), "{log}");
}

#[test]
fn aggregation_strategies_by_camel_class_and_by_reference() {
    let log = run(
        r##"
- route:
    from:
      uri: timer:strategy
      parameters: {period: 10, repeatCount: 2}
      steps:
        - setBody: {simple: "n${header.CamelTimerCounter}"}
        - aggregate:
            correlationExpression: {constant: all}
            aggregationStrategy: "#class:org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy"
            completionSize: 2
            steps:
              - log: "grouped ${body}"
- route:
    from:
      uri: timer:multicast
      parameters: {repeatCount: 1}
      steps:
        - multicast:
            aggregationStrategy: "#class:org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy"
            steps:
              - setBody: {constant: left}
              - setBody: {constant: right}
        - log: "branches ${body}"
"##,
        "3",
    );
    assert!(log.contains(r#"grouped ["n1","n2"]"#), "{log}");
    assert!(log.contains(r#"branches ["left","right"]"#), "{log}");
    let (ok, all) = validate(
        r##"
- from:
    uri: direct:a
    steps:
      - split:
          simple: "${body}"
          aggregationStrategy: "#class:com.acme.MyStrategy"
          steps: [{to: log:x}]
      - enrich:
          constant: direct:b
          aggregationStrategy: "#bean:myStrategy"
      - recipientList:
          constant: direct:b
          aggregationStrategy: "#myStrategy"
"##,
    );
    assert!(!ok, "{all}");
    assert!(
        all.contains("`com.acme.MyStrategy` is a Java class"),
        "{all}"
    );
    assert_eq!(
        all.matches("unknown aggregation strategy `#").count(),
        2,
        "{all}"
    );
}

#[test]
fn circuit_breaker_sets_camel_4_response_properties() {
    let log = run(
        r#"
- route:
    from:
      uri: timer:breaker
      parameters: {repeatCount: 2}
      steps:
        - circuitBreaker:
            resilience4jConfiguration:
              slidingWindowSize: "10"
              minimumNumberOfCalls: "10"
            steps:
              - choice:
                  when:
                    - simple: "${header.CamelTimerCounter} == 2"
                      steps:
                        - throwException: {exceptionType: java.io.IOException, message: down}
            onFallback:
              steps:
                - log: "fallback ${exchangeProperty.CamelCircuitBreakerResponseFromFallback} short ${exchangeProperty.CamelCircuitBreakerResponseShortCircuited}"
        - log: "after ${header.CamelTimerCounter}: ok=${exchangeProperty.CamelCircuitBreakerResponseSuccessfulExecution} rejected=${exchangeProperty.CamelCircuitBreakerResponseRejected} timedOut=${exchangeProperty.CamelCircuitBreakerResponseTimedOut}"
"#,
        "2",
    );
    assert!(
        log.contains("after 1: ok=true rejected=false timedOut=false"),
        "{log}"
    );
    assert!(log.contains("fallback true short true"), "{log}");
    assert!(log.contains("after 2: ok=false rejected=false"), "{log}");
}

/// The PostgreSQL the sql tests use (`CAMEL_TEST_PG_URL`), as a JDBC URL.
fn pg_jdbc() -> String {
    let url = std::env::var("CAMEL_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .expect("CAMEL_TEST_PG_URL is a postgres:// URL");
    format!("jdbc:postgresql://{rest}")
}

#[test]
fn sql_with_camels_data_source_spellings_and_the_body_as_statement() {
    let log = run(
        &format!(
            r#"
- route:
    from:
      uri: timer:sql
      parameters: {{repeatCount: 1}}
      steps:
        - setBody: {{constant: "select 41 + 1 as answer"}}
        - to:
            uri: sql:unused
            parameters:
              dataSource: "{jdbc}"
              useMessageBodyForSql: "true"
              outputType: SelectOne
        - log: "answer ${{body}}"
"#,
            jdbc = pg_jdbc()
        ),
        "1",
    );
    // SelectOne of one column is the value itself, as in Camel.
    assert!(log.contains("answer 42 "), "{log}");
    let (ok, all) = validate(
        r##"
- from:
    uri: direct:a
    steps:
      - to:
          uri: "sql:select 1"
          parameters: {dataSource: "#bean:missingDs"}
"##,
    );
    assert!(!ok, "{all}");
    assert!(
        all.contains("`missingDs` is neither a database URL nor a context resource"),
        "{all}"
    );
}

/// Starts `yaml` (with `files` beside it, and a `rest` item) serving HTTP on a free port; the running
/// binary, its base URL and the folder.
async fn serve(
    yaml: &str,
    files: &[(&str, &str)],
) -> (support::admin_api::Camel, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let routes = dir.path().join("rest.camel.yaml");
    std::fs::write(&routes, yaml).unwrap();
    let mut camel = support::admin_api::Camel::start_with(&routes, dir.path(), &["--port", "0"]);
    // The REST document's route starts last: every operation is served by then.
    let line = camel.wait_for("/openapi.json route_id").await;
    let base = format!("http://127.0.0.1:{}", support::serving_port(&line));
    (camel, base, dir)
}

async fn answer(req: reqwest::RequestBuilder) -> (u16, String) {
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

const PETS: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "pets", "version": "1"},
  "paths": {
    "/pets/{id}": {
      "get": {"operationId": "getPet",
              "responses": {"200": {"content": {"application/json": {}}}}}
    },
    "/pets": {
      "post": {"operationId": "addPet",
               "requestBody": {"content": {"application/json": {}}},
               "responses": {"201": {"description": "added"}}}
    }
  }
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_contract_first_validation_and_the_rest_consumer() {
    let (mut camel, base, _dir) = serve(
        r#"
- restConfiguration:
    clientRequestValidation: true
- rest:
    openApi:
      specification: pets.json
- rest:
    path: /shop
    get:
      - path: /search
        to: direct:search
        param:
          - {name: q, type: query, required: true}
        produces: application/json
- route:
    from:
      uri: direct:getPet
      steps:
        - setBody: {simple: '{"pet": "${header.id}"}'}
- route:
    from:
      uri: direct:addPet
      steps:
        - setBody: {simple: "added ${body}"}
- route:
    from:
      uri: direct:search
      steps:
        - setBody: {simple: '{"found": "${header.q}"}'}
- route:
    from:
      uri: rest:get:hello/{name}
      steps:
        - setBody: {simple: "Hello ${header.name}"}
"#,
        &[("pets.json", PETS)],
    )
    .await;
    let client = reqwest::Client::new();
    assert_eq!(
        answer(client.get(format!("{base}/pets/7"))).await,
        (200, r#"{"pet": "7"}"#.to_string())
    );
    let (status, body) = answer(
        client
            .post(format!("{base}/pets"))
            .header("content-type", "application/json")
            .body("{}"),
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "added {}"));
    // clientRequestValidation: the wrong media type, a missing required query parameter.
    let (status, _) = answer(
        client
            .post(format!("{base}/pets"))
            .header("content-type", "text/plain")
            .body("x"),
    )
    .await;
    assert_eq!(status, 415);
    assert_eq!(
        answer(client.get(format!("{base}/shop/search"))).await.0,
        400
    );
    let (status, body) = answer(client.get(format!("{base}/shop/search?q=cat"))).await;
    assert_eq!((status, body.as_str()), (200, r#"{"found": "cat"}"#));
    let (status, _) = answer(
        client
            .get(format!("{base}/shop/search?q=cat"))
            .header("accept", "text/html"),
    )
    .await;
    assert_eq!(status, 406);
    // `rest:get:hello/{name}` is a GET route on /hello/{name}.
    let (status, body) = answer(client.get(format!("{base}/hello/camel"))).await;
    assert_eq!((status, body.as_str()), (200, "Hello camel"));
    assert_ne!(
        answer(client.post(format!("{base}/hello/camel"))).await.0,
        200
    );
    camel.child.kill().ok();
}

#[test]
fn quoted_route_options_are_read_as_camel_reads_them() {
    let log = run(
        r#"
- route:
    id: quiet
    autoStartup: "false"
    from:
      uri: timer:quiet
      parameters: {repeatCount: 1}
      steps: [{log: "quiet ran"}]
- route:
    id: loud
    autoStartup: "true"
    startupOrder: "2"
    from:
      uri: timer:loud
      parameters: {repeatCount: 1}
      steps: [{log: "loud ran"}]
"#,
        "1",
    );
    assert!(log.contains("loud ran"), "{log}");
    assert!(!log.contains("quiet ran"), "{log}");
}
