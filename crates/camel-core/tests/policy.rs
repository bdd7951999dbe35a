//! Camel's Policy EIP: one policy registered in the context wraps the `policy` blocks of
//! builder and YAML routes alike, sees their failures, and a name nothing is registered
//! under is a located error when the route is added.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::{CamelError, Exchange};
use camel_core::builder::{constant, RouteBuilder};
use camel_core::CamelContext;
use camel_eip::middleware::from_fn;

/// A context with the policy `audited`: it stamps a header on the way in, counts the
/// exchanges it wraps and the failures it sees come back.
fn context() -> (CamelContext, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let ctx = CamelContext::new();
    let wrapped = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let (w, f) = (Arc::clone(&wrapped), Arc::clone(&failed));
    ctx.add_policy(
        "audited",
        from_fn(move |mut ex: Exchange, next| {
            let (w, f) = (Arc::clone(&w), Arc::clone(&f));
            async move {
                w.fetch_add(1, Ordering::SeqCst);
                ex.message.headers.insert("audited", true);
                let out = next.call(ex).await;
                if out.is_err() {
                    f.fetch_add(1, Ordering::SeqCst);
                }
                out
            }
        }),
    );
    (ctx, wrapped, failed)
}

fn body(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

#[tokio::test]
async fn a_builder_policy_wraps_its_block_and_not_the_steps_after_it() {
    let (ctx, wrapped, failed) = context();
    let route = RouteBuilder::from("direct:in")
        .policy("audited", |r| {
            r.set_body(constant("inside"))
                .filter(camel_core::builder::simple("${body} == 'never'"), |r| r)
        })
        .set_header("after", constant("yes"))
        .build();
    let fails = RouteBuilder::from("direct:fails")
        .policy("audited", |r| {
            r.throw_exception("IllegalStateException", "no")
        })
        .build();
    ctx.add_routes(vec![route, fails]).await.unwrap();
    ctx.start().await.unwrap();

    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(body(&out), "inside");
    assert!(out.message.headers.get("audited").is_some());
    assert!(out.message.headers.get("after").is_some());
    let err: CamelError = ctx
        .request("direct:fails", Exchange::new("y"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no"), "{err}");
    assert_eq!(wrapped.load(Ordering::SeqCst), 2);
    assert_eq!(failed.load(Ordering::SeqCst), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn a_yaml_policy_finds_the_policy_registered_in_rust() {
    let (ctx, wrapped, _) = context();
    let routes = camel_core::yaml::load_str(
        "\
- route:
    id: yaml
    from:
      uri: direct:yaml
      steps:
        - policy:
            ref: \"#audited\"
            inheritErrorHandler: true
            steps:
              - setBody: {simple: \"seen ${header.audited}\"}
",
        "policy.yaml",
    )
    .unwrap();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let out = ctx
        .request("direct:yaml", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(body(&out), "seen true");
    assert_eq!(wrapped.load(Ordering::SeqCst), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn an_unknown_policy_is_a_located_error_with_the_nearest_registered_name() {
    let (ctx, _, _) = context();
    let routes = camel_core::yaml::load_str(
        "\
- route:
    id: typo
    from:
      uri: direct:typo
      steps:
        - policy:
            ref: audit
            steps:
              - log: inside
",
        "typo.yaml",
    )
    .unwrap();
    let errors = ctx.add_routes(routes).await.unwrap_err().to_string();
    assert!(
        errors.contains("typo.yaml:7:13: route `typo`: at steps[0].policy: no policy is registered under `audit`, did you mean `audited`?"),
        "{errors}"
    );
    assert!(errors.contains("registered: audited"), "{errors}");
}
