//! YAML/builder parity: for every step, the YAML DSL and the Rust builder produce the same
//! definition, and the routes behave the same.

use std::sync::Arc;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use camel_core::builder::{
    constant, header, jsonpath, simple, BodyType, Multicast, RouteBuilder, Strategy,
};
use camel_core::{CamelContext, EndpointDefinition, RouteDefinition};

fn yaml(steps: &str) -> RouteDefinition {
    let indented: String = steps.lines().map(|l| format!("        {l}\n")).collect();
    let text =
        format!("- route:\n    id: r\n    from:\n      uri: direct:in\n      steps:\n{indented}");
    let mut routes = camel_core::yaml::load_str(&text, "test.yaml")
        .unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    routes.remove(0)
}

fn built(b: RouteBuilder) -> RouteDefinition {
    b.id("r").build()
}

async fn run(route: RouteDefinition, input: Exchange) -> Result<Exchange, CamelError> {
    let ctx = CamelContext::new();
    ctx.add_resource(
        "shout",
        Arc::new(BoxProcessor::sync(|mut ex: Exchange| {
            let t = ex.message.body.as_text().unwrap_or_default().to_uppercase();
            ex.message.body = Body::from(t);
            Ok(ex)
        })),
    );
    ctx.add_routes(vec![route])
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    let out = ctx.request("direct:in", input).await;
    ctx.stop().await;
    out
}

/// Asserts both definitions are equal and give the same result for `input`; returns it.
async fn same(
    y: RouteDefinition,
    b: RouteDefinition,
    input: Exchange,
) -> Result<Exchange, CamelError> {
    assert_eq!(y, b, "YAML and builder definitions differ");
    let from_yaml = run(y, input.clone()).await;
    let from_builder = run(b, input).await;
    match (&from_yaml, &from_builder) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.message, b.message);
            assert_eq!(a.properties, b.properties);
            assert_eq!(a.is_stopped(), b.is_stopped());
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("different outcomes: {from_yaml:?} vs {from_builder:?}"),
    }
    from_yaml
}

fn text(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

#[tokio::test]
async fn set_header_in_three_spellings() {
    let b = built(RouteBuilder::from("direct:in").set_header("greeting", simple("hi ${body}")));
    for spelling in [
        "- set_header: {name: greeting, simple: 'hi ${body}'}",
        "- setHeader: {name: greeting, expression: {simple: 'hi ${body}'}}",
        "- set_header: {name: greeting, simple: {expression: 'hi ${body}'}}",
    ] {
        let y = yaml(spelling);
        assert_eq!(y.steps[0].name, "set_header");
        let out = run(y, Exchange::new("bob")).await.unwrap();
        assert_eq!(
            out.header("greeting"),
            Some(&Value::from("hi bob")),
            "{spelling}"
        );
    }
    let y = yaml("- set_header: {name: greeting, simple: 'hi ${body}'}");
    same(y, b, Exchange::new("bob")).await.unwrap();
}

#[tokio::test]
async fn set_body_and_transform() {
    let y = yaml("- set_body: {constant: fixed}\n- transform: {simple: '${body}!'}");
    let b = built(
        RouteBuilder::from("direct:in")
            .set_body(constant("fixed"))
            .transform(simple("${body}!")),
    );
    let out = same(y, b, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&out), "fixed!");
}

#[tokio::test]
async fn set_property_and_remove_header() {
    let y = yaml("- set_property: {name: p, header: h}\n- remove_header: {name: h}");
    let b = built(
        RouteBuilder::from("direct:in")
            .set_property("p", header("h"))
            .remove_header("h"),
    );
    let out = same(y, b, Exchange::new("").with_header("h", "v"))
        .await
        .unwrap();
    assert_eq!(out.property("p"), Some(&Value::from("v")));
    assert!(out.header("h").is_none());
}

#[tokio::test]
async fn log_step_and_to_log() {
    let y = yaml("- log: 'got ${body}'\n- to: log:parity");
    let b = built(
        RouteBuilder::from("direct:in")
            .log("got ${body}")
            .to("log:parity"),
    );
    let out = same(y, b, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&out), "x");
}

#[tokio::test]
async fn filter_runs_nested_steps_only_on_match() {
    let y = yaml("- filter:\n    simple: \"${header.kind} == 'gold'\"\n    steps:\n      - set_body: {constant: vip}");
    let b = built(
        RouteBuilder::from("direct:in").filter(simple("${header.kind} == 'gold'"), |s| {
            s.set_body(constant("vip"))
        }),
    );
    let gold = same(
        y.clone(),
        b.clone(),
        Exchange::new("x").with_header("kind", "gold"),
    )
    .await
    .unwrap();
    assert_eq!(text(&gold), "vip");
    let plain = same(y, b, Exchange::new("x").with_header("kind", "tin"))
        .await
        .unwrap();
    assert_eq!(text(&plain), "x");
    assert_eq!(
        plain.property("CamelFilterMatched"),
        Some(&Value::Bool(false))
    );
}

#[tokio::test]
async fn choice_takes_first_match_or_otherwise() {
    let y = yaml(concat!(
        "- choice:\n",
        "    when:\n",
        "      - simple: '${header.n} > 10'\n",
        "        steps: [{set_body: {constant: big}}]\n",
        "      - simple: '${header.n} > 5'\n",
        "        steps: [{set_body: {constant: medium}}]\n",
        "    otherwise:\n",
        "      steps: [{set_body: {constant: small}}]",
    ));
    let b = built(RouteBuilder::from("direct:in").choice(|c| {
        c.when(simple("${header.n} > 10"), |s| s.set_body(constant("big")))
            .when(simple("${header.n} > 5"), |s| {
                s.set_body(constant("medium"))
            })
            .otherwise(|s| s.set_body(constant("small")))
    }));
    for (n, want) in [(11, "big"), (9, "medium"), (2, "small")] {
        let out = same(y.clone(), b.clone(), Exchange::new("").with_header("n", n))
            .await
            .unwrap();
        assert_eq!(text(&out), want, "n = {n}");
    }
}

#[tokio::test]
async fn stop_ends_the_route() {
    let y = yaml("- set_body: {constant: a}\n- stop: {}\n- set_body: {constant: b}");
    let b = built(
        RouteBuilder::from("direct:in")
            .set_body(constant("a"))
            .stop()
            .set_body(constant("b")),
    );
    let out = same(y, b, Exchange::new("")).await.unwrap();
    assert_eq!(text(&out), "a");
    assert!(out.is_stopped());
}

#[tokio::test]
async fn stop_inside_filter_ends_the_whole_route() {
    let y =
        yaml("- filter:\n    constant: 'true'\n    steps: [stop]\n- set_body: {constant: after}");
    let b = built(
        RouteBuilder::from("direct:in")
            .filter(constant("true"), |s| s.stop())
            .set_body(constant("after")),
    );
    let out = same(y, b, Exchange::new("before")).await.unwrap();
    assert_eq!(text(&out), "before");
}

#[tokio::test]
async fn marshal_and_unmarshal_json() {
    let y = yaml(
        "- unmarshal: {json: {}}\n- set_header: {name: a, jsonpath: '$.a'}\n- marshal: {json: {}}",
    );
    let b = built(
        RouteBuilder::from("direct:in")
            .unmarshal_json()
            .set_header("a", jsonpath("$.a"))
            .marshal_json(),
    );
    let out = same(y, b, Exchange::new(r#"{"a": 5}"#)).await.unwrap();
    assert_eq!(out.header("a"), Some(&Value::Int(5)));
    assert_eq!(text(&out), r#"{"a":5}"#);
}

#[tokio::test]
async fn convert_body_to_with_camel_alias() {
    let y = yaml("- convertBodyTo: {type: String}");
    let b = built(RouteBuilder::from("direct:in").convert_body_to(BodyType::Text));
    let out = same(y, b, Exchange::new(Body::from(b"bytes".to_vec())))
        .await
        .unwrap();
    assert!(matches!(out.message.body, Body::Text(_)));
}

#[tokio::test]
async fn process_by_reference() {
    let y = yaml("- process: {ref: shout}");
    let b = built(RouteBuilder::from("direct:in").process_ref("shout"));
    let out = same(y, b, Exchange::new("hey")).await.unwrap();
    assert_eq!(text(&out), "HEY");
}

#[tokio::test]
async fn builder_closure_process() {
    let route = RouteBuilder::from("direct:in")
        .id("r")
        .process(|mut ex| {
            ex.message.headers.insert("seen", true);
            Ok(ex)
        })
        .build();
    let out = run(route, Exchange::new("")).await.unwrap();
    assert_eq!(out.header("seen"), Some(&Value::Bool(true)));
}

#[tokio::test]
async fn to_with_parameters_beside_the_uri() {
    let y = yaml("- to: {uri: 'log:p', parameters: {show_headers: true}}");
    let b = built(
        RouteBuilder::from("direct:in")
            .to_endpoint(EndpointDefinition::new("log:p").parameter("show_headers", true)),
    );
    same(y, b, Exchange::new("x")).await.unwrap();
}

#[tokio::test]
async fn failing_step_surfaces_the_error() {
    let y = yaml("- unmarshal: {json: {}}");
    let b = built(RouteBuilder::from("direct:in").unmarshal_json());
    let err = same(y, b, Exchange::new("{not json")).await.unwrap_err();
    assert!(err.to_string().contains("json"), "{err}");
}

#[tokio::test]
async fn multicast_and_scatter_gather_collect_all_branches() {
    let y = yaml(concat!(
        "- multicast:\n",
        "    parallel: false\n",
        "    strategy: collect_all\n",
        "    steps:\n",
        "      - set_body: {constant: a}\n",
        "      - transform: {simple: '${body}-b'}\n",
    ));
    let b = built(RouteBuilder::from("direct:in").multicast(
        Multicast::sequential().strategy(Strategy::CollectAll),
        |s| s.set_body(constant("a")).transform(simple("${body}-b")),
    ));
    let out = same(y, b, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&out), r#"["a","x-b"]"#);

    let sg = yaml("- scatter_gather:\n    strategy: collect_all\n    steps:\n      - set_body: {constant: p}\n      - set_body: {constant: q}\n");
    let out = run(sg, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&out), r#"["p","q"]"#);
}

#[tokio::test]
async fn remove_headers_by_pattern_and_remove_property() {
    let y = yaml(
        "- set_property: {name: p, constant: v}\n- remove_headers: {pattern: 'Camel*'}\n- remove_property: {name: p}",
    );
    let b = built(
        RouteBuilder::from("direct:in")
            .set_property("p", constant("v"))
            .remove_headers("Camel*")
            .remove_property("p"),
    );
    let input = Exchange::new("x")
        .with_header("CamelFileName", "a.txt")
        .with_header("CamelTimerCounter", 3)
        .with_header("order", "o-1");
    let out = same(y, b, input).await.unwrap();
    assert!(out.header("CamelFileName").is_none());
    assert!(out.header("CamelTimerCounter").is_none());
    assert_eq!(out.header("order"), Some(&Value::from("o-1")));
    assert!(out.property("p").is_none());
}

#[tokio::test]
async fn bare_stop_and_scalar_convert_body_to() {
    let y = yaml("- convert_body_to: {type: String}\n- stop\n- set_body: {constant: never}");
    let b = built(
        RouteBuilder::from("direct:in")
            .convert_body_to(BodyType::Text)
            .stop()
            .set_body(constant("never")),
    );
    let input = || Exchange::new(Body::from(b"bytes".to_vec()));
    let out = same(y, b, input()).await.unwrap();
    assert_eq!(out.message.body, Body::from("bytes"));
    assert!(out.is_stopped());
    // The scalar shorthand runs the same.
    let short = yaml("- convert_body_to: String\n- stop\n- set_body: {constant: never}");
    let out = run(short, input()).await.unwrap();
    assert_eq!(out.message.body, Body::from("bytes"));
    assert!(out.is_stopped());
}

#[tokio::test]
async fn typed_parallel_multicast_matches_camel_spellings() {
    let b = built(
        RouteBuilder::from("direct:in")
            .multicast(Multicast::parallel().strategy(Strategy::CollectAll), |s| {
                s.set_body(constant("a")).set_body(constant("b"))
            }),
    );
    assert_eq!(b.steps[0].config["parallel"], true);
    assert_eq!(b.steps[0].config["strategy"], "collect_all");
    let y = yaml(concat!(
        "- multicast:\n",
        "    parallelProcessing: true\n",
        "    aggregationStrategy: collectAll\n",
        "    steps:\n",
        "      - setBody: {constant: a}\n",
        "      - setBody: {constant: b}\n",
    ));
    let from_yaml = run(y, Exchange::new("x")).await.unwrap();
    let from_builder = run(b, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&from_yaml), r#"["a","b"]"#);
    assert_eq!(from_yaml.message, from_builder.message);

    let sg = built(
        RouteBuilder::from("direct:in")
            .scatter_gather(Strategy::CollectAll, |s| s.set_body(constant("p"))),
    );
    assert_eq!(
        text(&run(sg, Exchange::new("x")).await.unwrap()),
        r#"["p"]"#
    );
}

#[tokio::test]
async fn keys_inside_user_maps_are_kept_as_written() {
    // Endpoint parameters and language options are the user's data: the reader keeps their
    // spelling, and the endpoint and the language read Camel's camelCase names themselves.
    let y = yaml(concat!(
        "- to: {uri: 'log:p', parameters: {showHeaders: true}}\n",
        "- setHeader: {name: myHeader, jsonpath: {expression: '$.a', suppressExceptions: true}}\n",
    ));
    assert!(y.steps[0].config["parameters"].get("showHeaders").is_some());
    let out = run(y, Exchange::new(r#"{"b": 1}"#)).await.unwrap();
    assert_eq!(out.header("myHeader"), Some(&Value::Null));
}

#[tokio::test]
async fn typed_resequence_runs_like_the_yaml_form() {
    use camel_core::builder::Resequence;
    let b = built(
        RouteBuilder::from("direct:in")
            .resequence(Resequence::stream(header("seq")).capacity(10))
            .set_body(constant("after")),
    );
    let y = yaml(concat!(
        "- resequence:\n",
        "    simple: '${header.seq}'\n",
        "    streamConfig: {capacity: 10}\n",
        "- set_body: {constant: after}\n",
    ));
    assert_eq!(b.steps[0].config["stream"]["sequence"], "${header.seq}");
    assert_eq!(b.steps[0].config["stream"]["capacity"], 10);
    for route in [b, y] {
        // The caller is acknowledged at the continuation boundary.
        run(route, Exchange::new("x").with_header("seq", 1))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn every_spelling_of_an_option_reads_the_same() {
    // snake_case, Camel's camelCase (aliases) and the kebab-case of Camel 3's YAML DSL.
    let b = built(
        RouteBuilder::from("direct:in")
            .multicast(Multicast::parallel().strategy(Strategy::CollectAll), |s| {
                s.set_body(constant("a"))
            }),
    );
    for spelling in [
        "parallel: true, strategy: collect_all",
        "parallelProcessing: true, aggregationStrategy: collectAll",
        "parallel-processing: true, aggregation-strategy: collect_all",
    ] {
        let y = yaml(&format!(
            "- multicast: {{{spelling}, steps: [{{set-body: {{constant: a}}}}]}}"
        ));
        let out = run(y, Exchange::new("x")).await.unwrap();
        assert_eq!(text(&out), r#"["a"]"#, "{spelling}");
    }
    let out = run(b, Exchange::new("x")).await.unwrap();
    assert_eq!(text(&out), r#"["a"]"#);
}

#[tokio::test]
async fn set_variable_and_remove_variable() -> Result<(), CamelError> {
    let b = built(
        RouteBuilder::from("direct:in")
            .set_variable("v", simple("<${body}>"))
            .set_body(simple("${variable.v}"))
            .remove_variable("v"),
    );
    let y = yaml(
        "- set_variable: {name: v, simple: '<${body}>'}\n- set_body: {simple: '${variable.v}'}\n- remove_variable: {name: v}",
    );
    let out = same(y, b, Exchange::new("x")).await?;
    assert_eq!(text(&out), "<x>");
    assert_eq!(out.variable("v"), None);
    Ok(())
}
