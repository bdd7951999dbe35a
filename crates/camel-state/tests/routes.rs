//! Repositories named by URL in Camel-spelled YAML, through a context with
//! `camel_state::register`: an idempotent consumer and an aggregate on SQLite, whose state
//! outlives the context.

use std::sync::Arc;

use camel_api::{Exchange, Value};
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn context(yaml: &str) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    camel_state::register(|name, resource| ctx.add_resource(name, resource));
    ctx.add_routes(load(yaml))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

#[tokio::test]
async fn an_idempotent_consumer_on_sqlite_remembers_ids_across_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        r#"
- route:
    id: idem
    from:
      uri: direct:in
      steps:
        - idempotentConsumer:
            header: id
            messageIdRepository: 'sqlite:{}'
            skipDuplicate: false
            steps:
              - to: mock:out
"#,
        dir.path().join("ids.db").display()
    );
    let (ctx, mock) = context(&yaml).await;
    for id in ["a", "b", "a"] {
        ctx.request("direct:in", Exchange::new("x").with_header("id", id))
            .await
            .unwrap();
    }
    let dup: Vec<Option<Value>> = mock
        .endpoint("out")
        .received()
        .iter()
        .map(|e| e.property("CamelDuplicateMessage").cloned())
        .collect();
    assert_eq!(dup, [None, None, Some(Value::from(true))]);
    ctx.stop().await;

    let (ctx, mock) = context(&yaml).await;
    ctx.request("direct:in", Exchange::new("x").with_header("id", "b"))
        .await
        .unwrap();
    assert_eq!(
        mock.endpoint("out").received()[0].property("CamelDuplicateMessage"),
        Some(&Value::from(true)),
        "the id survived the restart"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn an_aggregate_on_sqlite_keeps_open_groups_across_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        r#"
- route:
    id: agg
    from:
      uri: direct:in
      steps:
        - aggregate:
            id: orders
            correlationExpression: {{header: id}}
            aggregationStrategy: string?delimiter=,
            aggregationRepository: 'sqlite:{}'
            completionSize: 3
            steps:
              - to: mock:out
"#,
        dir.path().join("groups.db").display()
    );
    let (ctx, _mock) = context(&yaml).await;
    for body in ["1", "2"] {
        ctx.request("direct:in", Exchange::new(body).with_header("id", "a"))
            .await
            .unwrap();
    }
    ctx.stop().await;
    let (ctx, mock) = context(&yaml).await;
    ctx.request("direct:in", Exchange::new("3").with_header("id", "a"))
        .await
        .unwrap();
    assert_eq!(
        mock.endpoint("out").received()[0].message.body,
        "1,2,3".into()
    );
    ctx.stop().await;
}

#[tokio::test]
async fn a_database_url_without_a_registered_store_is_a_clear_error() {
    let yaml = r#"
- route:
    from:
      uri: direct:in
      steps:
        - aggregate:
            correlationExpression: {header: id}
            aggregationStrategy: grouped_body
            aggregationRepository: 'postgres://u:secret@db/x'
            completionSize: 3
            steps: [{to: 'log:x'}]
"#;
    let errs = CamelContext::new().validate(&load(yaml)).await.unwrap_err();
    let text = errs.to_string();
    assert!(text.contains("no state store is registered"), "{text}");
    assert!(!text.contains("secret"), "the password is redacted: {text}");
}
