//! Kamelets, Pipes of Kamelets, route templates and templated routes: expanded when the
//! files load, each use a route of its own, their parameters bound, typed and checked.

use camel_api::Exchange;
use camel_core::{CamelContext, RouteDefinition, RouteErrors};

fn load_all(texts: &[(&str, &str)]) -> Result<Vec<RouteDefinition>, RouteErrors> {
    let (routes, errors) = camel_core::yaml::load_texts_partial_with(
        texts,
        &camel_core::properties::Properties::new(),
    );
    if errors.is_empty() {
        Ok(routes)
    } else {
        Err(RouteErrors(errors))
    }
}

fn load(text: &str) -> Vec<RouteDefinition> {
    load_all(&[(text, "routes.yaml")]).unwrap_or_else(|e| panic!("{e}"))
}

async fn request(routes: Vec<RouteDefinition>, uri: &str, body: &str) -> Exchange {
    let ctx = CamelContext::new();
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    let mut exchange = Exchange::default();
    exchange.message.body = body.to_string().into();
    let out = ctx.request(uri, exchange).await.unwrap();
    ctx.stop().await;
    out
}

const GREETER: &str = "\
apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: greet-action
spec:
  definition:
    title: Greet
    required:
      - greeting
    properties:
      greeting:
        title: Greeting
        description: The word put before the body.
        type: string
      times:
        type: integer
        default: 1
      loud:
        type: boolean
        default: false
  dependencies:
    - camel:core
  template:
    from:
      uri: kamelet:source
      steps:
        - setHeader:
            name: times
            constant: \"{{times}}\"
        - setBody:
            simple: \"{{greeting}} ${body}{{?suffix}}\"
";

#[tokio::test]
async fn a_kamelet_used_as_an_action_runs_with_its_parameters() {
    let route = "\
- route:
    id: main
    from:
      uri: direct:in
      steps:
        - to: kamelet:greet-action?greeting=Hello&times=3
        - to:
            uri: kamelet:greet-action
            parameters:
              greeting: Hi
              suffix: '!'
";
    let routes = load_all(&[(route, "routes.yaml"), (GREETER, "greet.kamelet.yaml")])
        .unwrap_or_else(|e| panic!("{e}"));
    // The route and one copy per use.
    let ids: Vec<_> = routes.iter().filter_map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.contains(&"greet-action-2".to_string()), "{ids:?}");
    let out = request(routes, "direct:in", "world").await;
    assert_eq!(out.message.body.as_text().unwrap(), "Hi Hello world!");
    // The second use left `times` at its default, typed as the definition says.
    assert_eq!(out.message.header("times").unwrap().to_string(), "1");
}

#[tokio::test]
async fn a_source_kamelet_feeds_the_route_that_uses_it() {
    let text = "\
- route:
    id: ticks
    from:
      uri: kamelet:timer-source
      parameters:
        message: tick
        period: 10
        repeatCount: 2
      steps:
        - to: mock:ticks
";
    let routes = load(text);
    let copy = routes
        .iter()
        .find(|r| r.id.as_deref() != Some("ticks"))
        .unwrap();
    assert!(copy.from.uri.starts_with("timer:tick"), "{:?}", copy.from);
    assert_eq!(
        copy.from.parameters.get("period"),
        Some(&serde_json::json!(10))
    );
    let main = routes
        .iter()
        .find(|r| r.id.as_deref() == Some("ticks"))
        .unwrap();
    assert!(main.from.uri.starts_with("direct:"), "{:?}", main.from);
    CamelContext::new().validate(&routes).await.unwrap();
}

#[test]
fn kamelet_sinks_start_before_their_senders_and_sources_after_them() {
    // Routes start in list order and stop in reverse: a sink must outlive its senders and
    // a source must stop before the route it feeds.
    let routes = load(
        "\
- route:
    id: ticks
    from:
      uri: kamelet:timer-source?message=tick
      steps:
        - to: kamelet:log-sink
- route:
    id: other
    from:
      uri: direct:other
      steps:
        - to: mock:other
",
    );
    let ids: Vec<&str> = routes.iter().filter_map(|r| r.id.as_deref()).collect();
    let at = |id: &str| ids.iter().position(|i| i.starts_with(id)).unwrap();
    assert!(at("log-sink") < at("ticks"), "{ids:?}");
    assert!(at("ticks") < at("timer-source"), "{ids:?}");
    // The file's own routes keep their order.
    assert!(at("ticks") < at("other"), "{ids:?}");
}

#[test]
fn kamelet_errors_name_the_kamelet_the_parameter_and_the_use() {
    let route = "\
- from:
    uri: direct:in
    steps:
      - to: kamelet:greet-action?times=soon
      - to: kamelet:greet-actoin?greeting=x
      - to: kamelet:sink
";
    let err = load_all(&[(route, "routes.yaml"), (GREETER, "greet.kamelet.yaml")]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("routes.yaml:4:")
            && text.contains(
                "parameter `times` of Kamelet `greet-action` is an integer; `soon` is not"
            ),
        "{text}"
    );
    assert!(
        text.contains(
            "Kamelet `greet-action` needs the parameter `greeting` (The word put before the body.)"
        ),
        "{text}"
    );
    assert!(
        text.contains("routes.yaml:5:")
            && text.contains("no Kamelet named `greet-actoin` (did you mean `greet-action`?)"),
        "{text}"
    );
    assert!(
        text.contains("routes.yaml:6:")
            && text.contains("written only inside a Kamelet's template"),
        "{text}"
    );
    // Not a missing application property.
    assert!(!text.contains("property"), "{text}");
}

#[test]
fn a_sink_in_from_and_a_source_in_to_are_refused() {
    let route = "\
- from:
    uri: kamelet:log-sink
    steps:
      - to: kamelet:timer-source?message=x
";
    let text = load_all(&[(route, "routes.yaml")]).unwrap_err().to_string();
    assert!(text.contains("use it in `to`, not in `from`"), "{text}");
    assert!(text.contains("use it in `from`, not in `to`"), "{text}");
}

#[tokio::test]
async fn a_user_kamelet_replaces_the_built_in_one_of_its_name() {
    let mine = GREETER.replace("greet-action", "set-body-action");
    let route = "\
- from:
    uri: direct:in
    steps:
      - to: kamelet:set-body-action?greeting=Mine&value=ignored
";
    let routes = load_all(&[(route, "routes.yaml"), (&mine, "mine.kamelet.yaml")]).unwrap();
    let out = request(routes, "direct:in", "x").await;
    assert_eq!(out.message.body.as_text().unwrap(), "Mine x");
}

#[tokio::test]
async fn a_pipe_of_kamelet_references() {
    let pipe = "\
apiVersion: camel.apache.org/v1
kind: Pipe
metadata:
  name: greetings
spec:
  source:
    uri: direct:p
  steps:
    - ref:
        kind: Kamelet
        apiVersion: camel.apache.org/v1
        name: insert-header-action
      properties:
        name: who
        value: ${body}
    - ref:
        kind: Kamelet
        name: set-body-action
      properties:
        value: hello ${header.who}
  sink:
    ref:
      kind: Kamelet
      name: log-sink
    properties:
      showHeaders: true
";
    let routes = load(pipe);
    assert_eq!(routes.len(), 4, "{routes:?}");
    let out = request(routes, "direct:p", "pipe").await;
    assert_eq!(out.message.body.as_text().unwrap(), "hello pipe");
}

const TEMPLATES: &str = "\
- routeTemplate:
    id: greeter
    parameters:
      - name: name
        description: The direct name the route listens on.
      - name: greeting
        defaultValue: Hello
      - name: suffix
        required: false
    route:
      from:
        uri: direct:{{name}}
        steps:
          - setBody:
              simple: '{{greeting}} ${body}{{?suffix}}'
- templatedRoute:
    routeTemplateRef: greeter
    routeId: english
    parameters:
      - name: name
        value: en
- templatedRoute:
    routeTemplateRef: greeter
    parameters:
      - name: name
        value: fr
      - name: greeting
        value: Bonjour
      - name: suffix
        value: ' !'
";

#[tokio::test]
async fn route_templates_with_defaults_and_templated_routes() {
    let routes = load(TEMPLATES);
    assert_eq!(routes.len(), 2);
    assert_eq!(routes[0].id.as_deref(), Some("english"));
    let out = request(routes.clone(), "direct:en", "world").await;
    assert_eq!(out.message.body.as_text().unwrap(), "Hello world");
    let out = request(routes, "direct:fr", "monde").await;
    assert_eq!(out.message.body.as_text().unwrap(), "Bonjour monde !");
}

#[test]
fn templated_route_errors_are_located_and_never_missing_properties() {
    let text = format!(
        "{TEMPLATES}\
- templatedRoute:
    routeTemplateRef: greeter
    parameters:
      - name: greeting
        value: Hey
- templatedRoute:
    routeTemplateRef: greter
"
    );
    let err = load_all(&[(&text, "routes.yaml")]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("routes.yaml:31:")
            && text.contains("route template `greeter` needs the parameter `name` (The direct name the route listens on.)"),
        "{text}"
    );
    assert!(
        text.contains("no route template with id `greter` (did you mean `greeter`?)"),
        "{text}"
    );
    assert!(!text.contains("property"), "{text}");
}

#[test]
fn a_template_used_from_another_file() {
    let (templates, uses) = TEMPLATES.split_at(TEMPLATES.find("- templatedRoute").unwrap());
    let routes = load_all(&[(uses, "uses.yaml"), (templates, "templates.yaml")]).unwrap();
    assert_eq!(routes.len(), 2);
    // The copy is read in the template's file.
    let source = routes[0].source.as_ref().unwrap();
    assert_eq!(&*source.file, "templates.yaml");
}

#[test]
fn a_kamelet_that_uses_itself_stops() {
    let looping = "\
apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: again
spec:
  template:
    from:
      uri: kamelet:source
      steps:
        - to: kamelet:again
";
    let route = "- from: {uri: direct:a, steps: [{to: kamelet:again}]}";
    let err = load_all(&[(route, "r.yaml"), (looping, "again.kamelet.yaml")]).unwrap_err();
    assert!(
        err.to_string().contains("levels deep: does it use itself?"),
        "{err}"
    );
}

#[test]
fn a_pipe_configures_its_kamelets_through_properties_by_role() {
    let pipe = "\
apiVersion: camel.apache.org/v1
kind: Pipe
metadata:
  name: configured
spec:
  integration:
    configuration:
      - type: property
        value: camel.kamelet.timer-source.source.message=from the pipe
      - type: property
        value: camel.kamelet.log-sink.loggerName=configured
  source:
    ref: {kind: Kamelet, name: timer-source}
  sink:
    ref: {kind: Kamelet, name: log-sink}
";
    let routes = load(pipe);
    let text = serde_json::to_string(&routes).unwrap();
    assert!(text.contains("from the pipe"), "{text}");
    assert!(text.contains("log:configured"), "{text}");
}

#[tokio::test]
async fn the_kamelet_step_and_kaoto_s_template_id_spelling() {
    let text = "\
- from:
    uri: direct:in
    steps:
      - kamelet:
          name: set-body-action?value=one
      - kamelet:
          name: insert-header-action
          parameters:
            name: was
            value: ${body}
      - to:
          uri: kamelet
          parameters:
            templateId: set-body-action
            value: two after ${header.was}
";
    let out = request(load(text), "direct:in", "x").await;
    assert_eq!(out.message.body.as_text().unwrap(), "two after one");
}

#[tokio::test]
async fn the_builder_instantiates_a_template_with_typed_parameters() {
    #[derive(serde::Serialize)]
    struct Greeter {
        name: String,
        greeting: Option<String>,
    }
    let (templates, _) = TEMPLATES.split_at(TEMPLATES.find("- templatedRoute").unwrap());
    let props = camel_core::properties::Properties::new();
    let routes = camel_core::yaml::instantiate_template(
        &[(templates, "templates.yaml")],
        "greeter",
        "german",
        &Greeter {
            name: "de".into(),
            greeting: Some("Hallo".into()),
        },
        &props,
    )
    .unwrap();
    assert_eq!(routes.len(), 1);
    let out = request(routes, "direct:de", "Welt").await;
    assert_eq!(out.message.body.as_text().unwrap(), "Hallo Welt");

    #[derive(serde::Serialize)]
    struct Nameless {
        greeting: &'static str,
    }
    let err = camel_core::yaml::instantiate_template(
        &[(templates, "templates.yaml")],
        "greeter",
        "x",
        &Nameless { greeting: "Hi" },
        &props,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("route template `greeter` needs the parameter `name`"),
        "{err}"
    );
}
