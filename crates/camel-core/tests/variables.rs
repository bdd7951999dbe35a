//! Camel's variables in YAML as Camel writes them, and through the builder: exchange
//! and `global:` scopes, `setVariables`, `removeVariable`, `convertVariableTo`.

use camel_api::{CamelError, Exchange, Value};
use camel_core::builder::{simple, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition};

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn run(routes: Vec<RouteDefinition>, uri: &str, body: &str) -> Result<Exchange, CamelError> {
    let ctx = CamelContext::new();
    ctx.add_routes(routes)
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    let out = ctx.request(uri, Exchange::new(body)).await;
    ctx.stop().await;
    out
}

fn text(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

#[tokio::test]
async fn set_variable_then_read_it_in_simple() -> Result<(), CamelError> {
    let routes = load(
        "\
- route:
    from:
      uri: direct:in
      steps:
        - setVariable:
            name: greeting
            simple: 'Hello ${body}'
        - setVariable:
            name: unused
            expression:
              constant:
                expression: test
        - setBody:
            simple: '${variable.greeting}!'
",
    );
    let out = run(routes, "direct:in", "World").await?;
    assert_eq!(text(&out), "Hello World!");
    assert_eq!(out.variable("greeting"), Some(&Value::from("Hello World")));
    assert_eq!(out.variable("unused"), Some(&Value::from("test")));
    assert!(
        out.header("greeting").is_none(),
        "a variable is not a header"
    );
    Ok(())
}

#[tokio::test]
async fn set_variables_convert_and_remove() -> Result<(), CamelError> {
    let routes = load(
        "\
- route:
    from:
      uri: direct:in
      steps:
        - setVariables:
            variables:
              - name: n
                simple: '${body}'
              - name: label
                constant: count
        - convertVariableTo:
            name: n
            type: java.lang.Integer
        - removeVariable:
            name: label
        - setBody:
            simple: '${variables}'
",
    );
    let out = run(routes, "direct:in", "41").await?;
    assert_eq!(out.variable("n"), Some(&Value::Int(41)));
    assert_eq!(out.variable("label"), None);
    assert_eq!(text(&out), r#"{"n":41}"#);
    Ok(())
}

#[tokio::test]
async fn global_variables_cross_routes_and_exchanges() -> Result<(), CamelError> {
    let routes = load(
        "\
- route:
    from:
      uri: direct:set
      steps:
        - setVariable: {name: 'global:core_test_last', simple: '${body}'}
- route:
    from:
      uri: direct:get
      steps:
        - setBody: {simple: 'last=${variable.global:core_test_last}'}
",
    );
    let ctx = CamelContext::new();
    ctx.add_routes(routes)
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    ctx.request("direct:set", Exchange::new("first")).await?;
    let out = ctx.request("direct:get", Exchange::new("")).await?;
    ctx.stop().await;
    assert_eq!(text(&out), "last=first");
    assert_eq!(
        out.variable("core_test_last"),
        None,
        "not an exchange variable"
    );
    Ok(())
}

#[tokio::test]
async fn route_variables_are_named_with_their_route_id() -> Result<(), CamelError> {
    let routes = load(
        "\
- route:
    id: counter
    from:
      uri: direct:set
      steps:
        - setVariable: {name: 'route:counter:seen', simple: '${body}'}
- route:
    id: reader
    from:
      uri: direct:get
      steps:
        - setBody: {simple: '${variable.route:counter:seen}/${variable.route:reader:seen}'}
",
    );
    let ctx = CamelContext::new();
    ctx.add_routes(routes)
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    ctx.request("direct:set", Exchange::new("yes")).await?;
    let out = ctx.request("direct:get", Exchange::new("")).await?;
    ctx.stop().await;
    assert_eq!(text(&out), "yes/");
    Ok(())
}

#[tokio::test]
async fn route_scope_and_bad_types_are_located_errors() {
    let text = "\
- route:
    from:
      uri: direct:in
      steps:
        - setVariable: {name: 'route:x', constant: a}
        - convertVariableTo: {name: x, type: Date}
";
    let errors = match camel_core::yaml::load_str(text, "routes.yaml") {
        Ok(routes) => CamelContext::new()
            .validate(&routes)
            .await
            .err()
            .map(|e| e.to_string()),
        Err(e) => Some(e.to_string()),
    };
    let errors = errors.unwrap_or_default();
    assert!(errors.contains("route:ROUTE_ID:NAME"), "{errors}");
    assert!(errors.contains(":5:"), "located at its line: {errors}");
}

#[tokio::test]
async fn builder_and_yaml_agree() -> Result<(), CamelError> {
    let built = RouteBuilder::from("direct:in")
        .id("r")
        .set_variable("v", simple("${body}${body}"))
        .set_body(simple("${variable.v}"))
        .convert_variable_to("v", "Integer")
        .remove_variable("v")
        .build();
    let yaml = load(
        "\
- route:
    id: r
    from:
      uri: direct:in
      steps:
        - setVariable: {name: v, simple: '${body}${body}'}
        - setBody: {simple: '${variable.v}'}
        - convertVariableTo: {name: v, type: Integer}
        - removeVariable: {name: v}
",
    );
    assert_eq!(yaml[0], built);
    let out = run(vec![built], "direct:in", "12").await?;
    assert_eq!(text(&out), "1212");
    assert_eq!(out.variable("v"), None);
    Ok(())
}
