//! `aggregate` through a context: every completion option in Camel-spelled YAML (timers on
//! paused time), the builder's equal route, user strategies registered from Rust, stop and
//! hot swap.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, CamelError, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::{header, Aggregate, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::aggregate::names;
use camel_eip::aggregation::{AggregationStrategy, SharedStrategy};
use serde_json::json;

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn context_with(
    routes: Vec<RouteDefinition>,
    setup: impl FnOnce(&CamelContext),
) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    setup(&ctx);
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

async fn context(yaml: &str) -> (CamelContext, MockComponent) {
    context_with(load(yaml), |_| {}).await
}

/// A route `direct:in → aggregate(options) → mock:after`, the aggregate sending to mock:out.
fn route(options: &str) -> String {
    format!(
        r#"
- route:
    id: agg
    from:
      uri: direct:in
      steps:
        - aggregate:
            correlationExpression: {{header: id}}
{options}
            steps:
              - to: mock:out
        - to: mock:after
"#
    )
}

async fn send(ctx: &CamelContext, id: &str, body: &str) -> Result<Exchange, CamelError> {
    ctx.request("direct:in", Exchange::new(body).with_header("id", id))
        .await
}

fn bodies(mock: &MockComponent) -> Vec<serde_json::Value> {
    mock.endpoint("out")
        .received()
        .iter()
        .map(|e| camel_eip::aggregation::body_json(&e.message.body))
        .collect()
}

fn completed_by(mock: &MockComponent) -> Vec<String> {
    mock.endpoint("out")
        .received()
        .iter()
        .map(|e| {
            e.property(names::COMPLETED_BY)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

async fn wait_for(mock: &MockComponent, n: usize) {
    let out = mock.endpoint("out");
    out.expected_message_count(n);
    out.assert_is_satisfied(Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Lets the timer task run after a manual `advance`.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn completion_size_in_camel_yaml_sets_the_properties_and_passes_exchanges_on() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: \"#class:org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy\"\n            completionSize: 3",
    ))
    .await;
    for (id, body) in [("a", "1"), ("b", "2"), ("a", "3"), ("a", "4"), ("b", "5")] {
        let out = send(&ctx, id, body).await.unwrap();
        assert_eq!(
            out.message.body,
            Body::from(body),
            "the incoming exchange goes on"
        );
    }
    assert_eq!(bodies(&mock), [json!(["1", "3", "4"])]);
    let agg = &mock.endpoint("out").received()[0];
    assert_eq!(agg.property(names::SIZE), Some(&Value::from(3)));
    assert_eq!(
        agg.property(names::COMPLETED_BY),
        Some(&Value::from("size"))
    );
    assert_eq!(
        agg.property(names::CORRELATION_KEY),
        Some(&Value::from("a"))
    );
    assert_eq!(mock.endpoint("after").received_count(), 5);
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn completion_timeout_is_per_group_and_rearmed_by_each_exchange() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: StringAggregationStrategy?delimiter=+\n            completionTimeout: 500",
    ))
    .await;
    let t0 = tokio::time::Instant::now();
    send(&ctx, "a", "1").await.unwrap();
    tokio::time::advance(Duration::from_millis(400)).await;
    send(&ctx, "a", "2").await.unwrap();
    send(&ctx, "b", "x").await.unwrap();
    tokio::time::advance(Duration::from_millis(400)).await;
    settle().await;
    assert_eq!(
        mock.endpoint("out").received_count(),
        0,
        "the second exchange re-armed group a"
    );
    wait_for(&mock, 2).await;
    assert_eq!(bodies(&mock), [json!("1+2"), json!("x")]);
    assert_eq!(completed_by(&mock), ["timeout", "timeout"]);
    assert!(t0.elapsed() >= Duration::from_millis(900));
    assert!(t0.elapsed() < Duration::from_millis(1000));
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn discard_on_completion_timeout_drops_the_group() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: string\n            completionTimeout: 2s\n            completionSize: 2\n            discardOnCompletionTimeout: true",
    ))
    .await;
    send(&ctx, "a", "1").await.unwrap();
    send(&ctx, "b", "1").await.unwrap();
    send(&ctx, "b", "2").await.unwrap();
    tokio::time::advance(Duration::from_secs(3)).await;
    settle().await;
    assert_eq!(completed_by(&mock), ["size"], "a timed out and was dropped");
    // Group a is gone: a new exchange for a starts a fresh group.
    send(&ctx, "a", "3").await.unwrap();
    send(&ctx, "a", "4").await.unwrap();
    assert_eq!(bodies(&mock), [json!("12"), json!("34")]);
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn completion_interval_completes_every_open_group() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: GroupedBodyAggregationStrategy\n            completionInterval: 1000",
    ))
    .await;
    let t0 = tokio::time::Instant::now();
    send(&ctx, "a", "1").await.unwrap();
    send(&ctx, "b", "2").await.unwrap();
    send(&ctx, "a", "3").await.unwrap();
    wait_for(&mock, 2).await;
    assert!(t0.elapsed() >= Duration::from_millis(1000));
    let mut got = bodies(&mock);
    got.sort_by_key(|v| v.to_string());
    assert_eq!(got, [json!(["1", "3"]), json!(["2"])]);
    assert_eq!(completed_by(&mock), ["interval", "interval"]);
    ctx.stop().await;
}

#[tokio::test]
async fn completion_predicate_on_the_aggregate_or_eagerly_on_the_incoming_exchange() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: string?delimiter=,\n            completionPredicate: {simple: \"${body} contains 'end'\"}",
    ))
    .await;
    for body in ["x", "y", "end", "z"] {
        send(&ctx, "a", body).await.unwrap();
    }
    assert_eq!(bodies(&mock), [json!("x,y,end")]);
    assert_eq!(completed_by(&mock), ["predicate"]);
    ctx.stop().await;

    // Eager: the predicate sees the incoming exchange only (`x,y` would not match `== 'x,y'`).
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: string?delimiter=,\n            completionPredicate: {simple: \"${body} == 'y'\"}\n            eagerCheckCompletion: true",
    ))
    .await;
    for body in ["x", "y", "z"] {
        send(&ctx, "a", body).await.unwrap();
    }
    assert_eq!(bodies(&mock), [json!("x,y")]);
    ctx.stop().await;
}

#[tokio::test]
async fn completion_size_can_be_an_expression() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSizeExpression: {header: size}",
    ))
    .await;
    for (i, size) in [(1, 2), (2, 2), (3, 3), (4, 3), (5, 3)] {
        ctx.request(
            "direct:in",
            Exchange::new(i.to_string())
                .with_header("id", "a")
                .with_header("size", size),
        )
        .await
        .unwrap();
    }
    assert_eq!(bodies(&mock), [json!(["1", "2"]), json!(["3", "4", "5"])]);
    ctx.stop().await;
}

#[tokio::test]
async fn completion_from_batch_consumer_completes_all_groups_when_the_batch_is_in() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionFromBatchConsumer: true",
    ))
    .await;
    for (id, body) in [("a", "1"), ("b", "2"), ("a", "3")] {
        let mut ex = Exchange::new(body).with_header("id", id);
        ex.properties.insert("CamelBatchSize", 3);
        ctx.request("direct:in", ex).await.unwrap();
        if body != "3" {
            assert_eq!(mock.endpoint("out").received_count(), 0);
        }
    }
    let mut got = bodies(&mock);
    got.sort_by_key(|v| v.to_string());
    assert_eq!(got, [json!(["1", "3"]), json!(["2"])]);
    assert_eq!(completed_by(&mock), ["consumer", "consumer"]);
    ctx.stop().await;
}

#[tokio::test]
async fn completion_on_new_correlation_group_completes_the_previous_one() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionOnNewCorrelationGroup: true",
    ))
    .await;
    for (id, body) in [("a", "1"), ("a", "2"), ("b", "3"), ("b", "4"), ("c", "5")] {
        send(&ctx, id, body).await.unwrap();
    }
    assert_eq!(bodies(&mock), [json!(["1", "2"]), json!(["3", "4"])]);
    assert_eq!(completed_by(&mock), ["new", "new"]);
    ctx.stop().await;
}

#[tokio::test]
async fn force_completion_on_stop_completes_open_groups_and_without_it_they_are_dropped() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSize: 10\n            forceCompletionOnStop: true",
    ))
    .await;
    send(&ctx, "a", "1").await.unwrap();
    send(&ctx, "b", "2").await.unwrap();
    ctx.stop().await;
    assert_eq!(completed_by(&mock), ["force", "force"]);

    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSize: 10",
    ))
    .await;
    send(&ctx, "a", "1").await.unwrap();
    ctx.stop().await;
    assert_eq!(mock.endpoint("out").received_count(), 0);
}

#[tokio::test]
async fn a_closed_correlation_key_is_refused() {
    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSize: 1\n            closeCorrelationKeyOnCompletion: 100",
    ))
    .await;
    send(&ctx, "a", "1").await.unwrap();
    let err = send(&ctx, "a", "2").await.unwrap_err();
    assert_eq!(err.kind_name(), "ClosedCorrelationKeyException", "{err}");
    send(&ctx, "b", "3").await.unwrap();
    assert_eq!(bodies(&mock), [json!(["1"]), json!(["3"])]);
    ctx.stop().await;
}

#[tokio::test]
async fn an_invalid_correlation_key_fails_unless_ignored() {
    let (ctx, _mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSize: 2",
    ))
    .await;
    let err = ctx
        .request("direct:in", Exchange::new("no id"))
        .await
        .unwrap_err();
    assert_eq!(err.kind_name(), "CamelExchangeException", "{err}");
    ctx.stop().await;

    let (ctx, mock) = context(&route(
        "            aggregationStrategy: grouped_body\n            completionSize: 2\n            ignoreInvalidCorrelationKeys: true",
    ))
    .await;
    ctx.request("direct:in", Exchange::new("no id"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("after").received_count(), 1);
    assert_eq!(mock.endpoint("out").received_count(), 0);
    ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_senders_lose_nothing_with_or_without_optimistic_locking() {
    for optimistic in [false, true] {
        let (ctx, mock) = context(&route(&format!(
            "            aggregationStrategy: grouped_body\n            completionSize: 10\n            optimisticLocking: {optimistic}"
        )))
        .await;
        let mut tasks = Vec::new();
        for t in 0..8 {
            let ctx = ctx.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    let key = format!("k{}", (t * 50 + i) % 4);
                    send(&ctx, &key, &format!("{t}-{i}")).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let got = bodies(&mock);
        assert_eq!(got.len(), 40, "400 exchanges in groups of 10");
        let mut all: Vec<String> = got
            .iter()
            .flat_map(|g| g.as_array().unwrap().iter().map(|v| v.to_string()))
            .collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 400, "every exchange in exactly one group");
        ctx.stop().await;
    }
}

/// Keeps the largest body (as a number).
#[derive(Debug)]
struct Max;

impl AggregationStrategy for Max {
    fn aggregate(&self, old: Option<Exchange>, new: Exchange) -> Result<Exchange, CamelError> {
        let n = |e: &Exchange| {
            camel_eip::aggregation::body_json(&e.message.body)
                .as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .unwrap_or(i64::MIN)
        };
        Ok(match old {
            Some(old) if n(&old) >= n(&new) => old,
            _ => new,
        })
    }
}

#[tokio::test]
async fn a_user_strategy_registered_from_rust_is_found_by_name() {
    let yaml = route("            aggregationStrategy: maxStrategy\n            completionSize: 3");
    let (ctx, mock) = context_with(load(&yaml), |ctx| {
        let strategy: SharedStrategy = Arc::new(Max);
        ctx.add_resource("maxStrategy", Arc::new(strategy));
    })
    .await;
    for body in ["4", "9", "2"] {
        send(&ctx, "a", body).await.unwrap();
    }
    assert_eq!(bodies(&mock), [json!("9")]);
    ctx.stop().await;
}

#[tokio::test]
async fn an_unknown_strategy_is_a_located_error_with_a_suggestion() {
    let yaml = route("            aggregationStrategy: grouped_bdy\n            completionSize: 3");
    let errs = CamelContext::new()
        .validate(&load(&yaml))
        .await
        .unwrap_err();
    let text = errs.to_string();
    assert!(text.contains("grouped_body"), "{text}");
    assert!(text.contains("routes.yaml:"), "{text}");

    let yaml = route("            aggregationStrategy: grouped_body");
    let errs = CamelContext::new()
        .validate(&load(&yaml))
        .await
        .unwrap_err();
    assert!(errs.to_string().contains("completion condition"), "{errs}");
}

#[tokio::test]
async fn the_builder_writes_the_same_route_as_yaml() {
    let yaml = load(
        r#"
- route:
    id: agg
    from:
      uri: direct:in
      steps:
        - aggregate:
            correlation_expression: {header: id}
            aggregation_strategy: grouped_body
            completion_size: 3
            completion_timeout: 2000
            steps:
              - to: mock:out
"#,
    );
    let built = RouteBuilder::from("direct:in")
        .id("agg")
        .aggregate(
            Aggregate::new(header("id"), "grouped_body")
                .completion_size(3)
                .completion_timeout_ms(2000),
            |b| b.to("mock:out"),
        )
        .build();
    assert_eq!(yaml[0], built);
}

#[tokio::test]
async fn a_hot_swap_under_load_completes_every_group_once() {
    let yaml =
        route("            aggregationStrategy: grouped_body\n            completionSize: 5");
    let (ctx, mock) = context(&yaml).await;
    let definition = load(&yaml).remove(0);
    let controller = ctx.route_controller();
    let sender = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            for i in 0..2_000 {
                send(&ctx, &format!("k{}", i % 7), &i.to_string())
                    .await
                    .unwrap();
            }
        })
    };
    for _ in 0..5 {
        tokio::task::yield_now().await;
        controller.swap("agg", definition.clone()).await.unwrap();
    }
    sender.await.unwrap();
    // 2000 over 7 keys: 286 or 285 per key, so the last partial groups stay open.
    let got = bodies(&mock);
    let mut all: Vec<i64> = got
        .iter()
        .flat_map(|g| {
            g.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse::<i64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(got.iter().all(|g| g.as_array().unwrap().len() == 5));
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "no exchange in two groups");
    assert_eq!(
        got.len(),
        7 * (2_000 / 7 / 5),
        "every full group completed once"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn an_idempotent_consumer_in_camel_yaml_skips_duplicates() {
    let (ctx, mock) = context(
        r#"
- route:
    from:
      uri: direct:in
      steps:
        - idempotentConsumer:
            header: id
            messageIdRepository: memory:2
            steps:
              - to: mock:out
        - to: mock:after
"#,
    )
    .await;
    for id in ["a", "a", "b", "c", "a"] {
        let out = send(&ctx, id, "x").await.unwrap();
        let _ = out;
    }
    // a, b, c run; the second a is a duplicate; a was forgotten when c came in (bound 2).
    assert_eq!(mock.endpoint("out").received_count(), 4);
    let after = mock.endpoint("after").received();
    assert_eq!(after.len(), 5);
    assert_eq!(
        after[1].property("CamelDuplicateMessage"),
        Some(&Value::from(true))
    );
    let err = CamelContext::new()
        .validate(&load(
            "- route:\n    from:\n      uri: direct:in\n      steps:\n        - idempotentConsumer: {header: id, messageIdRepository: nowhere, steps: []}\n",
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no idempotent repository is registered under `nowhere`"),
        "{err}"
    );
    ctx.stop().await;
}

/// `completion_eager` (Camel's meaning): false (the default) completes the message id when
/// the route is done with the exchange, so a failure after the block forgets the id and a
/// redelivery runs the steps again; true completes it at the end of the block, so the
/// failure after it does not matter and the redelivery is a duplicate.
#[tokio::test]
async fn completion_eager_decides_whether_a_failure_after_the_block_forgets_the_id() {
    for (completion_eager, runs) in [(false, 2), (true, 1)] {
        let (ctx, mock) = context(&format!(
            r#"
- route:
    from:
      uri: direct:in
      steps:
        - idempotentConsumer:
            header: id
            completionEager: {completion_eager}
            steps:
              - to: mock:out
        - throwException: {{exceptionType: IllegalStateException, message: after the block}}
"#
        ))
        .await;
        for _ in 0..2 {
            let err = send(&ctx, "a", "x").await.unwrap_err();
            assert!(err.to_string().contains("after the block"), "{err}");
        }
        assert_eq!(
            mock.endpoint("out").received_count(),
            runs,
            "completion_eager: {completion_eager}"
        );
        ctx.stop().await;
    }
}
