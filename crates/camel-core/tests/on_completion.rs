//! `onCompletion` per route and per file, in Camel-spelled YAML and the builder (ADR 0052).

use std::sync::Arc;

use camel_api::Exchange;
use camel_components::MockComponent;
use camel_core::builder::{simple, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::config::OnCompletionConfig;

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

const ROUTES: &str = r#"
- onCompletion:
    onFailureOnly: true
    mode: BeforeConsumer
    steps:
      - setBody: {simple: "failed: ${exception.message}"}
      - to: mock:failed
- route:
    id: r
    onCompletion:
      - onCompleteOnly: true
        mode: BeforeConsumer
        onWhen: {simple: "${body} != 'quiet'"}
        steps: [{to: mock:done}]
    from:
      uri: direct:in
      steps:
        - choice:
            when:
              - simple: "${body} == 'bad'"
                steps: [{throwException: {exceptionType: Boom, message: "no"}}]
        - to: mock:out
"#;

#[tokio::test]
async fn complete_only_failure_only_on_when_and_context_level() {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(load(ROUTES)).await.unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:in", Exchange::new("ok")).await.unwrap();
    ctx.request("direct:in", Exchange::new("quiet"))
        .await
        .unwrap();
    assert!(ctx
        .request("direct:in", Exchange::new("bad"))
        .await
        .is_err());
    assert_eq!(mock.endpoint("done").received_count(), 1);
    let failed = mock.endpoint("failed").received();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].message.body, "failed: no".into());
    ctx.stop().await;
}

#[tokio::test]
async fn builder_matches_yaml_and_bad_mode_is_located() {
    let built = RouteBuilder::from("direct:in")
        .id("r")
        .on_completion(
            OnCompletionConfig {
                on_complete_only: true,
                mode: Some("BeforeConsumer".into()),
                on_when: Some(simple("${body} != 'quiet'")),
                ..Default::default()
            },
            |s| s.to("mock:done"),
        )
        .to("mock:out")
        .build();
    let yaml = load(
        "- route:\n    id: r\n    on_completion:\n      on_complete_only: true\n      mode: BeforeConsumer\n      on_when: {simple: \"${body} != 'quiet'\"}\n      steps: [{to: mock:done}]\n    from: {uri: direct:in, steps: [{to: mock:out}]}\n",
    );
    assert_eq!(built, yaml[0]);
    let bad = load("- onCompletion:\n    mode: Sideways\n- from: {uri: direct:a}\n");
    let err = CamelContext::new()
        .validate(&bad)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("routes.yaml:2:"), "{err}");
    assert!(err.contains("Sideways"), "{err}");
}
