//! The custom step and language from YAML and from the builder, and their located errors.

use camel_api::{Exchange, Value};
use camel_core::{CamelContext, RouteBuilder, RouteDefinition, RouteErrorKind};
use custom_step::{register, Uppercase, UppercaseStep};

async fn run(routes: Vec<RouteDefinition>, uri: &str, input: Exchange) -> Exchange {
    let ctx = CamelContext::new();
    register(&ctx);
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let out = ctx.request(uri, input).await.unwrap();
    ctx.stop().await;
    out
}

fn text(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

#[tokio::test]
async fn the_example_file_runs_the_step_and_the_language() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/routes.yaml");
    let routes = camel_core::yaml::load_file(file).unwrap();
    let out = run(routes.clone(), "direct:shout", Exchange::new("hello")).await;
    assert_eq!(text(&out), "HELLO");
    assert_eq!(out.header("echo"), Some(&Value::from("HELLO!")));
    let out = run(
        routes,
        "direct:shout-header",
        Exchange::new("body").with_header("name", "ada"),
    )
    .await;
    assert_eq!(out.header("name"), Some(&Value::from("ADA")));
    assert_eq!(text(&out), "body");
}

#[tokio::test]
async fn the_builder_writes_the_same_definition_as_yaml() {
    let built = RouteBuilder::from("direct:in")
        .id("r")
        .uppercase(Uppercase::header("name"))
        .step("uppercase", serde_json::json!({}))
        .build();
    let yaml = camel_core::yaml::load_str(
        "- route:\n    id: r\n    from:\n      uri: direct:in\n      steps:\n        - uppercase: {header: name}\n        - uppercase: {}\n",
        "r.yaml",
    )
    .unwrap();
    assert_eq!(yaml[0], built);
    let out = run(
        vec![built],
        "direct:in",
        Exchange::new("b").with_header("name", "x"),
    )
    .await;
    assert_eq!(out.header("name"), Some(&Value::from("X")));
    assert_eq!(text(&out), "B");
}

#[tokio::test]
async fn a_misspelt_option_is_located_with_a_suggestion() {
    let routes = camel_core::yaml::load_str(
        "- from:\n    uri: direct:a\n    steps:\n      - uppercase: {hedaer: name}\n",
        "bad.yaml",
    )
    .unwrap();
    let ctx = CamelContext::new();
    register(&ctx);
    let errs = ctx.validate(&routes).await.unwrap_err();
    let e = &errs.0[0];
    assert!(
        matches!(&e.kind, RouteErrorKind::UnknownKey { key, suggestion: Some(s), .. } if key == "hedaer" && s == "header"),
        "{e}"
    );
    let shown = e.to_string();
    assert!(shown.starts_with("bad.yaml:4:21: "), "{shown}");
    assert_eq!(e.step.as_deref(), Some("steps[0].uppercase"));
}

#[tokio::test]
async fn without_registration_the_step_is_unknown() {
    let routes = camel_core::yaml::load_str(
        "- from:\n    uri: direct:a\n    steps:\n      - uppercase: {}\n",
        "r.yaml",
    )
    .unwrap();
    let errs = CamelContext::new().validate(&routes).await.unwrap_err();
    assert!(
        matches!(&errs.0[0].kind, RouteErrorKind::UnknownKey { key, .. } if key == "uppercase"),
        "{errs}"
    );
}

#[tokio::test]
async fn a_bad_expression_in_the_custom_language_names_its_column() {
    let routes = camel_core::yaml::load_str(
        "- from:\n    uri: direct:a\n    steps:\n      - set_body: {expression: {upper: 'x ${body'}}\n",
        "bad.yaml",
    )
    .unwrap();
    let ctx = CamelContext::new();
    register(&ctx);
    let errs = ctx.validate(&routes).await.unwrap_err();
    let e = &errs.0[0];
    let RouteErrorKind::Expression(x) = &e.kind else {
        panic!("unexpected {e}")
    };
    assert_eq!(x.language, "upper");
    assert!(x.column > 1, "{x:?}");
    assert!(e.to_string().starts_with("bad.yaml:4:"), "{e}");
}
