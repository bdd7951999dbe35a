//! The backlog tracer from the library: off by default, turned on for a running route
//! (which recompiles it), records each step with the message as the step left it,
//! credentials hidden, within its bounds.

use camel_api::{Body, Exchange};
use camel_core::context::{TraceOutcome, TracerConfig};
use camel_core::CamelContext;

fn routes(text: &str) -> Vec<camel_core::RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

const ROUTES: &str = r#"
- route:
    id: orders
    from:
      uri: direct:orders
      steps:
        - set_header: {name: stage, constant: checked}
        - set_body: {simple: "order ${body}", id: rename}
        - choice:
            when:
              - simple: "${header.stage} == 'checked'"
                steps:
                  - to: direct:audit
        - log: "done ${body}"
- route:
    id: audit
    from:
      uri: direct:audit
      steps:
        - set_header: {name: audited, constant: "yes"}
"#;

#[tokio::test]
async fn a_running_route_traced_on_demand_shows_its_steps() {
    let ctx = CamelContext::new();
    ctx.add_routes(routes(ROUTES)).await.unwrap();
    ctx.start().await.unwrap();

    // Off by default: nothing is armed, nothing is kept.
    ctx.request("direct:orders", Exchange::new("1"))
        .await
        .unwrap();
    assert!(ctx.tracer().routes_traced().is_empty());
    assert!(ctx.tracer().exchanges(None, 0).is_empty());

    // On for one running route: it is recompiled with its hooks.
    let recompiled = ctx.set_tracing(Some("orders"), true).await.unwrap();
    assert_eq!(recompiled, ["orders"]);
    let ex = Exchange::new("42")
        .with_header("Authorization", "Bearer s3cret-token")
        .with_header("api_password", "hunter2")
        .with_header("callback", "http://ann:pw123@127.0.0.1/x");
    let out = ctx.request("direct:orders", ex).await.unwrap();
    assert_eq!(out.message.body.as_text().as_deref(), Some("order 42"));
    assert!(
        out.property(camel_core::context::RECORD_PROPERTY).is_none(),
        "the record's number does not leave the route"
    );

    let records = ctx.tracer().exchanges(Some("orders"), 0);
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(r.outcome, TraceOutcome::Completed);
    assert_eq!(r.exchange_id, out.id.to_string());
    let kinds: Vec<&str> = r.steps.iter().map(|s| &*s.kind).collect();
    assert_eq!(
        kinds,
        ["from", "set_header", "set_body", "choice", "to", "log"]
    );
    assert_eq!(&*r.steps[2].id, "rename", "a step's own id names it");
    assert_eq!(&*r.steps[1].id, "steps[0].set_header");
    assert_eq!(r.steps[4].depth, 1, "the `to` is inside the choice");
    let from_body = r.steps[0].body.as_ref().and_then(|b| b.text.as_deref());
    assert_eq!(from_body, Some("42"), "the message as it came in");
    let renamed = r.steps[2].body.as_ref().and_then(|b| b.text.as_deref());
    assert_eq!(renamed, Some("order 42"), "the message as the step left it");
    assert_eq!(r.steps[0].uri.as_deref(), Some("direct:orders"));

    // Credentials never reach the record.
    let shown = serde_json::to_string(r.as_ref()).unwrap();
    for secret in ["s3cret-token", "hunter2", "pw123"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    let headers = r.steps[1].headers.as_ref().expect("headers are kept");
    let auth = headers.iter().find(|(k, _)| k == "Authorization");
    assert_eq!(auth.map(|(_, v)| v.as_str()), Some("***"));
    assert!(headers.iter().any(|(k, v)| k == "stage" && v == "checked"));

    // The called route is not traced: it was not asked for.
    assert!(ctx.tracer().exchanges(Some("audit"), 0).is_empty());
    assert!(ctx.tracer().is_enabled("orders") && !ctx.tracer().is_enabled("audit"));

    // A cursor: only what finished after it.
    let last = records[0].seq;
    ctx.request("direct:orders", Exchange::new("2"))
        .await
        .unwrap();
    let newer = ctx.tracer().exchanges(None, last);
    assert_eq!(newer.len(), 1);
    assert!(newer[0].seq > last);

    // Off: nothing more is kept, what was kept stays.
    ctx.set_tracing(Some("orders"), false).await.unwrap();
    ctx.request("direct:orders", Exchange::new("3"))
        .await
        .unwrap();
    assert_eq!(ctx.tracer().exchanges(Some("orders"), 0).len(), 2);
    assert!(ctx.set_tracing(Some("nope"), true).await.is_err());
    ctx.stop().await;
}

#[tokio::test]
async fn every_route_including_later_ones_and_failures() {
    let ctx = CamelContext::new();
    ctx.tracer().configure(TracerConfig {
        capacity: 3,
        body_max_bytes: 16,
        ..TracerConfig::default()
    });
    ctx.tracer().enable(None);
    ctx.add_routes(routes(
        r#"
- route:
    id: fails
    from:
      uri: direct:fails
      steps:
        - set_body: {constant: "a long body that is cut by the tracer"}
        - throw_exception: {message: "boom", exception_type: IllegalArgumentException}
"#,
    ))
    .await
    .unwrap();
    ctx.start().await.unwrap();
    for _ in 0..5 {
        let failed = ctx
            .request("direct:fails", Exchange::new(Body::from("x")))
            .await;
        assert!(failed.is_err());
    }
    let records = ctx.tracer().exchanges(Some("fails"), 0);
    assert_eq!(records.len(), 3, "capacity");
    let r = &records[2];
    assert_eq!(r.outcome, TraceOutcome::Failed);
    assert!(
        r.error.as_deref().is_some_and(|e| e.contains("boom")),
        "{r:?}"
    );
    let cut = r.steps[1].body.as_ref().expect("a body");
    assert_eq!(cut.text.as_deref(), Some("a long body that"));
    assert!(cut.truncated && cut.size > 16);
    assert_eq!(r.steps[2].outcome, TraceOutcome::Failed);
    let sum: usize = records.iter().map(|r| r.bytes).sum();
    assert_eq!(ctx.tracer().held_bytes(), sum);
    ctx.stop().await;
}

#[tokio::test]
async fn the_parts_of_a_split_are_steps_of_their_exchange() {
    let ctx = CamelContext::new();
    ctx.tracer().enable(Some("parts"));
    ctx.add_routes(routes(
        r#"
- route:
    id: parts
    from:
      uri: direct:parts
      steps:
        - split:
            tokenize: {token: ","}
            steps:
              - set_body: {simple: "part ${body}"}
"#,
    ))
    .await
    .unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:parts", Exchange::new("a,b,c"))
        .await
        .unwrap();
    let records = ctx.tracer().exchanges(Some("parts"), 0);
    assert_eq!(
        records.len(),
        1,
        "one record for the exchange, none per part"
    );
    let r = &records[0];
    let parts: Vec<&camel_core::context::TracedStep> =
        r.steps.iter().filter(|s| &*s.kind == "set_body").collect();
    let bodies: Vec<Option<&str>> = parts
        .iter()
        .map(|s| s.body.as_ref().and_then(|b| b.text.as_deref()))
        .collect();
    assert_eq!(bodies, [Some("part a"), Some("part b"), Some("part c")]);
    assert!(parts
        .iter()
        .all(|s| s.depth == 1 && s.exchange_id != r.exchange_id));
    assert_eq!(
        &*r.steps[1].kind, "split",
        "the split starts before its parts"
    );
    ctx.stop().await;
}
