//! Property placeholders in a YAML route file: resolved before the routes are read, so
//! the resolved values are what the routes hold; an unresolvable one is a located error.

use camel_core::properties::Properties;
use camel_core::yaml::{load_str, load_str_with};

const FILE: &str = "- route:
    id: \"{{route.id:orders}}\"
    from:
      uri: \"timer:{{timer.name}}\"
      parameters: {period: \"{{period:250}}\"}
      steps:
        - set_body: {simple: \"Hello {{who}} from ${header.CamelTimerCounter}\"}
        - to: \"log:{{env:CAMEL_PLACEHOLDER_TEST_LOGGER:fallback}}\"
";

#[test]
fn placeholders_resolve_from_properties_env_and_defaults() {
    let mut props = Properties::new();
    props.set("timer.name", "tick");
    props.set("who", "world");
    let routes = load_str_with(FILE, "r.yaml", &props).unwrap();
    let route = &routes[0];
    assert_eq!(route.id.as_deref(), Some("orders"));
    assert_eq!(route.from.uri, "timer:tick");
    let shown = serde_json::to_string(route).unwrap();
    assert!(shown.contains("\"period\":250"), "{shown}");
    assert!(
        shown.contains("Hello world from ${header.CamelTimerCounter}"),
        "{shown}"
    );
    assert!(shown.contains("log:fallback"), "{shown}");
    assert!(!shown.contains("{{"), "{shown}");
}

#[test]
fn a_missing_key_is_located_at_its_value_and_named() {
    // Without properties, only defaults and env resolve: `timer.name` and `who` are missing.
    let errors = load_str(FILE, "r.yaml").unwrap_err();
    let shown: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].starts_with("r.yaml:4:7: "), "{shown:?}");
    assert!(shown[0].contains("no property `timer.name`"), "{shown:?}");
    assert!(shown[1].starts_with("r.yaml:7:22: "), "{shown:?}");
    assert!(shown[1].contains("no property `who`"), "{shown:?}");
}
