//! Beans registered in Rust, called from YAML (`bean:` step, `bean:` endpoint, `process`)
//! and from the builder; top-level `beans:` built from registered bean types; the errors
//! for Java classes, unknown beans and methods (ADR 0076). Also the `jq`, `tokenize` and
//! `csimple` languages in route files.

use camel_api::{Body, Exchange, MethodBean};
use camel_core::model::{BeanDefinition, BeanStep};
use camel_core::{CamelContext, RouteBuilder, RouteErrors};
use serde::Deserialize;

fn greeter() -> MethodBean {
    MethodBean::new()
        .method_fn("hello", |ex: &mut Exchange| {
            let name = ex.message.body.as_text().unwrap_or_default().into_owned();
            ex.message.body = format!("Hello {name}").into();
            Ok(())
        })
        .method_fn("bye", |ex: &mut Exchange| {
            let name = ex.message.body.as_text().unwrap_or_default().into_owned();
            ex.message.body = format!("{name}, bye").into();
            Ok(())
        })
}

/// Properties of a bean type registered in the tests.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WrapProperties {
    prefix: String,
    #[serde(default)]
    suffix: String,
}

fn context() -> CamelContext {
    let ctx = CamelContext::new();
    ctx.register_bean("greeter", greeter());
    ctx.register_bean_type("com.acme.Wrapper", |p: WrapProperties| {
        Ok(
            MethodBean::new().method_fn("wrap", move |ex: &mut Exchange| {
                let body = ex.message.body.as_text().unwrap_or_default().into_owned();
                ex.message.body = format!("{}{body}{}", p.prefix, p.suffix).into();
                Ok(())
            }),
        )
    });
    ctx
}

async fn call(ctx: &CamelContext, uri: &str, body: &str) -> String {
    let out = ctx.request(uri, Exchange::new(body)).await.unwrap();
    out.message.body.as_text().unwrap_or_default().into_owned()
}

async fn errors_of(ctx: &CamelContext, text: &str) -> RouteErrors {
    let (routes, mut errors) = camel_core::yaml::load_str_partial(text, "beans.yaml");
    if let Err(e) = ctx.validate(&routes).await {
        errors.extend(e.0);
    }
    RouteErrors(errors)
}

fn lines(errors: &RouteErrors) -> Vec<usize> {
    let mut v: Vec<usize> = errors
        .0
        .iter()
        .filter_map(|e| e.location.as_ref().map(|l| l.line))
        .collect();
    v.sort_unstable();
    v
}

#[tokio::test]
async fn yaml_calls_rust_beans_every_way_camel_writes_it() {
    let text = "\
- beans:
    - name: brackets
      type: com.acme.Wrapper
      properties:
        prefix: '['
        suffix: ']'
    - name: hits
      type: '#class:counter'
      properties: {start: 10}
- route:
    id: beans
    from:
      uri: direct:in
      steps:
        - bean: {ref: greeter, method: hello}
        - to: bean:greeter?method=bye
        - to:
            uri: bean
            parameters: {beanName: brackets, method: wrap}
        - bean: {ref: '#bean:hits', method: stamp}
        - setBody: {simple: '${body} #${header.counter}'}
- from:
    uri: direct:default
    steps:
      - process: {ref: greeter}
      - bean: {beanType: template}
";
    let ctx = context();
    let routes = camel_core::yaml::load_str(text, "beans.yaml").unwrap();
    assert_eq!(routes[0].beans.len(), 2);
    // `bean: {beanType: template}` builds a template bean without its `template`.
    let err = ctx.validate(&routes).await.unwrap_err().to_string();
    assert!(err.contains("beans.yaml:26:"), "{err}");
    assert!(err.contains("`template`"), "{err}");
    let text = text.replace("      - bean: {beanType: template}\n", "");
    ctx.add_routes(camel_core::yaml::load_str(&text, "beans.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    assert_eq!(call(&ctx, "direct:in", "Ada").await, "[Hello Ada, bye] #10");
    assert_eq!(call(&ctx, "direct:in", "Bo").await, "[Hello Bo, bye] #11");
    assert_eq!(call(&ctx, "direct:default", "Cy").await, "Hello Cy");
    ctx.stop().await;
}

#[tokio::test]
async fn the_builder_calls_and_declares_beans() {
    let ctx = context();
    let route = RouteBuilder::from("direct:b")
        .declare_bean(BeanDefinition::new("stars", "com.acme.Wrapper").property("prefix", "*"))
        .bean(BeanStep::reference("greeter").method("hello"))
        .bean(BeanStep::reference("stars"))
        .to("bean:greeter?method=bye")
        .build();
    ctx.add_routes(vec![route]).await.unwrap();
    ctx.start().await.unwrap();
    assert_eq!(call(&ctx, "direct:b", "Di").await, "*Hello Di, bye");
    ctx.stop().await;
}

#[tokio::test]
async fn java_beans_unknown_beans_and_methods_are_located_errors() {
    let text = "\
- beans:
    - name: legacy
      type: com.acme.LegacyService
    - name: typo
      type: countr
    - name: scripted
      type: counter
      script: 'new Counter()'
- from:
    uri: direct:x
    steps:
      - bean: {ref: greeter, method: helo}
      - bean: {ref: gretter}
      - to: bean:com.acme.Orders?method=place
      - bean: {beanType: com.acme.Pricing}
      - bean: {method: x}
";
    let ctx = context();
    let errors = errors_of(&ctx, text).await;
    let all = errors.to_string();
    assert_eq!(lines(&errors), [3, 5, 8, 12, 13, 14, 15, 16], "{all}");
    assert!(
        all.contains("Java classes cannot run here: register a Rust bean `legacy`"),
        "{all}"
    );
    assert!(
        all.contains("no bean type `countr` is registered; did you mean `counter`?"),
        "{all}"
    );
    assert!(all.contains("`script` builds a bean in the JVM"), "{all}");
    assert!(all.contains("has no method `helo`"), "{all}");
    assert!(all.contains("did you mean `hello`?"), "{all}");
    assert!(
        all.contains("no bean is registered under `gretter`; did you mean `greeter`?"),
        "{all}"
    );
    assert!(
        all.contains("register a Rust bean `com.acme.Orders`"),
        "{all}"
    );
    assert!(
        all.contains("register a Rust bean `com.acme.Pricing`"),
        "{all}"
    );
    assert!(all.contains("needs `ref`"), "{all}");
}

#[tokio::test]
async fn jq_tokenize_and_csimple_in_route_files() {
    let text = "\
- from:
    uri: direct:jq
    steps:
      - filter:
          jq: '.items | any(.qty > 3)'
          steps:
            - setHeader:
                name: big
                jq: {expression: '[.items[] | select(.qty > 3) | .sku] | join(\",\")'}
      - setBody:
          expression:
            jq: '.items | length'
- from:
    uri: direct:tok
    steps:
      - setBody:
          tokenize: {token: ';', group: 2}
- from:
    uri: direct:cs
    steps:
      - setBody: {csimple: '${body.toUpperCase()}!'}
";
    let ctx = CamelContext::new();
    ctx.add_routes(camel_core::yaml::load_str(text, "langs.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    let order = r#"{"items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 5}]}"#;
    let out = ctx
        .request("direct:jq", Exchange::new(Body::from(order)))
        .await
        .unwrap();
    assert_eq!(out.header("big").and_then(|v| v.as_str()), Some("b"));
    assert_eq!(out.message.body.as_text().as_deref(), Some("2"));
    let out = ctx
        .request("direct:tok", Exchange::new("1;2;3"))
        .await
        .unwrap();
    assert_eq!(
        out.message.body.as_text().as_deref(),
        Some(r#"["1;2","3"]"#)
    );
    assert_eq!(call(&ctx, "direct:cs", "hi").await, "HI!");
    ctx.stop().await;
    // A jq mistake is located at its expression.
    let errors = errors_of(
        &CamelContext::new(),
        "- from:\n    uri: direct:e\n    steps:\n      - setBody: {jq: '.a | nosuch'}\n",
    )
    .await;
    assert_eq!(lines(&errors), [4], "{errors}");
    assert!(errors.to_string().contains("nosuch"), "{errors}");
}

/// A swapped definition (admin API PUT, `--watch` reload) brings its file's beans: a bean
/// the first version did not declare is built before the new version compiles.
#[tokio::test]
async fn a_swap_builds_the_beans_its_file_declares() {
    let ctx = context();
    let first = "\
- route:
    id: wrapped
    from:
      uri: direct:wrapped
      steps:
        - bean: {ref: greeter, method: hello}
";
    let routes = camel_core::yaml::load_str(first, "v1.yaml").unwrap();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    assert_eq!(call(&ctx, "direct:wrapped", "Ann").await, "Hello Ann");
    let second = "\
- beans:
    - name: stars
      type: com.acme.Wrapper
      properties: {prefix: '*', suffix: '*'}
- route:
    id: wrapped
    from:
      uri: direct:wrapped
      steps:
        - bean: {ref: stars, method: wrap}
";
    let mut routes = camel_core::yaml::load_str(second, "v2.yaml").unwrap();
    ctx.route_controller()
        .swap("wrapped", routes.remove(0))
        .await
        .unwrap();
    assert_eq!(call(&ctx, "direct:wrapped", "Ann").await, "*Ann*");
    // A bean that cannot be built refuses the swap at its `type` and keeps the old route.
    let broken = second.replace("com.acme.Wrapper", "com.acme.Missing");
    let mut routes = camel_core::yaml::load_str(&broken, "v3.yaml").unwrap();
    let error = ctx
        .route_controller()
        .swap("wrapped", routes.remove(0))
        .await
        .unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.starts_with("v3.yaml:3:") && shown.contains("bean `stars`"),
        "{shown}"
    );
    assert_eq!(call(&ctx, "direct:wrapped", "Ann").await, "*Ann*");
    ctx.stop().await;
}
