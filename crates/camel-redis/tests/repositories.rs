//! The Redis idempotent and aggregation repositories against the real Redis: named by URL
//! or as a `#resource` in Camel-spelled YAML, their state seen by a second context with
//! connections of its own (a restarted process), and the aggregation's version checks.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use camel_api::test_support::service_from_env;
use camel_api::{Exchange, Value};
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::aggregate::{AggregationRepository, RepositoryError};
use camel_eip::idempotent::{IdempotentRepository, SharedIdempotentRepository};
use camel_eip::state::STORE_FACTORY;
use camel_redis::repositories::{
    RedisAggregationRepository, RedisIdempotentRepository, RedisStore,
};

fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{name}-{}-{nanos}", std::process::id())
}

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// A context as the `camel` binary makes it: camel-state's factory wrapped by Redis's.
async fn context(
    yaml: &str,
    resources: &[(&str, SharedIdempotentRepository)],
) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    camel_state::register(|name, resource| ctx.add_resource(name, resource));
    camel_redis::repositories::register(ctx.registry().resource(STORE_FACTORY), |name, r| {
        ctx.add_resource(name, r)
    });
    for (name, repo) in resources {
        ctx.add_resource(name, Arc::new(repo.clone()));
    }
    ctx.add_routes(load(yaml))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

fn duplicates(mock: &MockComponent) -> Vec<Option<Value>> {
    mock.endpoint("out")
        .received()
        .iter()
        .map(|e| e.property("CamelDuplicateMessage").cloned())
        .collect()
}

#[tokio::test]
async fn idempotent_ids_by_url_survive_into_a_second_context() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let route = unique("idem");
    let yaml = format!(
        r#"
- route:
    id: {route}
    from:
      uri: direct:in
      steps:
        - idempotentConsumer:
            header: id
            messageIdRepository: '{url}'
            skipDuplicate: false
            steps:
              - to: mock:out
"#
    );
    let (ctx, mock) = context(&yaml, &[]).await;
    for id in ["a", "b", "a"] {
        ctx.request("direct:in", Exchange::new("x").with_header("id", id))
            .await
            .unwrap();
    }
    assert_eq!(duplicates(&mock), [None, None, Some(Value::from(true))]);
    ctx.stop().await;

    let (ctx, mock) = context(&yaml, &[]).await;
    for id in ["b", "c"] {
        ctx.request("direct:in", Exchange::new("x").with_header("id", id))
            .await
            .unwrap();
    }
    assert_eq!(
        duplicates(&mock),
        [Some(Value::from(true)), None],
        "`b` survived the restart, `c` is new"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn an_idempotent_repository_as_a_resource_and_a_failed_exchange_forgets_its_id() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let name = unique("resource");
    let store = Arc::new(RedisStore::new(&url).unwrap());
    let repo = RedisIdempotentRepository::new(store.clone(), &name);
    let shared: SharedIdempotentRepository = Arc::new(repo.clone());
    let yaml = r#"
- route:
    from:
      uri: direct:in
      steps:
        - idempotentConsumer:
            header: id
            idempotentRepository: '#redisRepo'
            steps:
              - choice:
                  when:
                    - simple: '${body} == "fail"'
                      steps:
                        - throwException: {exceptionType: java.lang.IllegalStateException, message: boom}
              - to: mock:out
"#;
    let (ctx, mock) = context(yaml, &[("redisRepo", shared)]).await;
    ctx.request("direct:in", Exchange::new("ok").with_header("id", "1"))
        .await
        .unwrap();
    assert!(ctx
        .request("direct:in", Exchange::new("fail").with_header("id", "2"))
        .await
        .is_err());
    ctx.request("direct:in", Exchange::new("ok").with_header("id", "1"))
        .await
        .unwrap();
    assert_eq!(
        mock.endpoint("out").received().len(),
        1,
        "the duplicate skipped"
    );
    ctx.stop().await;

    // Seen from a connection of its own.
    let other = RedisIdempotentRepository::new(Arc::new(RedisStore::new(&url).unwrap()), &name);
    assert!(other.contains("1").await.unwrap());
    assert!(!other.contains("2").await.unwrap(), "removed on failure");
    assert!(!other.add("1").await.unwrap(), "one SADD wins");
    assert!(other.add("2").await.unwrap());
    other.remove("1").await.unwrap();
    other.remove("2").await.unwrap();
    assert!(!repo.contains("1").await.unwrap());
}

#[tokio::test]
async fn an_aggregate_on_redis_keeps_open_groups_across_a_stop() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let route = unique("agg");
    let yaml = format!(
        r#"
- route:
    id: {route}
    from:
      uri: direct:in
      steps:
        - aggregate:
            id: orders
            correlationExpression: {{header: id}}
            aggregationStrategy: string?delimiter=,
            aggregationRepository: '{url}'
            completionSize: 3
            steps:
              - to: mock:out
"#
    );
    let (ctx, mock) = context(&yaml, &[]).await;
    for body in ["1", "2"] {
        ctx.request("direct:in", Exchange::new(body).with_header("id", "a"))
            .await
            .unwrap();
    }
    assert!(mock.endpoint("out").received().is_empty());
    ctx.stop().await;

    let (ctx, mock) = context(&yaml, &[]).await;
    ctx.request("direct:in", Exchange::new("3").with_header("id", "a"))
        .await
        .unwrap();
    assert_eq!(
        mock.endpoint("out").received()[0].message.body,
        "1,2,3".into(),
        "the open group survived the stop"
    );
    ctx.stop().await;
    let repo = RedisAggregationRepository::new(
        Arc::new(RedisStore::new(&url).unwrap()),
        &format!("{route}/orders"),
    );
    assert!(
        repo.keys().await.unwrap().is_empty(),
        "completed and confirmed"
    );
}

#[tokio::test]
async fn aggregation_writes_check_the_version_and_completed_groups_wait_for_confirmation() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let name = unique("versions");
    let repo = RedisAggregationRepository::new(Arc::new(RedisStore::new(&url).unwrap()), &name);
    let other = RedisAggregationRepository::new(Arc::new(RedisStore::new(&url).unwrap()), &name);
    let v1 = repo.put("k", &Exchange::new("a"), None).await.unwrap();
    assert!(matches!(
        other.put("k", &Exchange::new("b"), None).await,
        Err(RepositoryError::Conflict)
    ));
    let v2 = other
        .put("k", &Exchange::new("a,b"), Some(v1))
        .await
        .unwrap();
    assert!(matches!(
        repo.put("k", &Exchange::new("a,c"), Some(v1)).await,
        Err(RepositoryError::Conflict)
    ));
    let read = repo.get("k").await.unwrap().unwrap();
    assert_eq!(
        (read.version, read.exchange.message.body.clone()),
        (v2, "a,b".into())
    );
    assert!(matches!(
        repo.complete("k", Some(v1), "c1", &read.exchange).await,
        Err(RepositoryError::Conflict)
    ));
    repo.complete("k", Some(v2), "c1", &read.exchange)
        .await
        .unwrap();
    assert!(other.get("k").await.unwrap().is_none());
    assert!(other.keys().await.unwrap().is_empty());
    let left = other.unconfirmed(std::time::Duration::ZERO).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!((left[0].key.as_str(), left[0].attempts), ("k", 0));
    other.record_attempt("c1").await.unwrap();
    assert_eq!(
        repo.unconfirmed(std::time::Duration::ZERO).await.unwrap()[0].attempts,
        1
    );
    assert!(
        repo.unconfirmed(std::time::Duration::from_secs(3600))
            .await
            .unwrap()
            .is_empty(),
        "too recent"
    );
    repo.confirm("c1").await.unwrap();
    assert!(other
        .unconfirmed(std::time::Duration::ZERO)
        .await
        .unwrap()
        .is_empty());
}
