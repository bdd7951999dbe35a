//! One test per kind of route error: each says where and why.

use camel_core::{CamelContext, RouteDefinition, RouteErrorKind, RouteErrors};

async fn errors_of(text: &str) -> RouteErrors {
    let routes = match camel_core::yaml::load_str(text, "routes.yaml") {
        Ok(r) => r,
        Err(e) => return e,
    };
    CamelContext::new()
        .validate(&routes)
        .await
        .expect_err("the file should not validate")
}

#[tokio::test]
async fn unknown_step_key_suggests_the_nearest() {
    let errs = errors_of(
        "- route:\n    id: r1\n    from:\n      uri: direct:a\n      steps:\n        - set_heder: {name: x, constant: y}\n",
    )
    .await;
    let e = &errs.0[0];
    match &e.kind {
        RouteErrorKind::UnknownKey {
            key, suggestion, ..
        } => {
            assert_eq!(key, "set_heder");
            assert_eq!(suggestion.as_deref(), Some("set_header"));
        }
        other => panic!("unexpected {other:?}"),
    }
    let loc = e.location.as_ref().expect("location");
    assert_eq!((loc.line, loc.column), (6, 11), "{e}");
    assert_eq!(e.route_id.as_deref(), Some("r1"));
    let text = e.to_string();
    assert!(text.starts_with("routes.yaml:6:11: route `r1`"), "{text}");
    assert!(text.contains("did you mean `set_header`"), "{text}");
}

#[tokio::test]
async fn unknown_option_inside_a_step() {
    let errs = errors_of(
        "- from:\n    uri: direct:a\n    steps:\n      - set_header: {nmae: x, constant: y}\n",
    )
    .await;
    let e = &errs.0[0];
    assert!(
        matches!(&e.kind, RouteErrorKind::UnknownKey { suggestion: Some(s), .. } if s == "name"),
        "{e}"
    );
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(4));
    assert_eq!(e.step.as_deref(), Some("steps[0].set_header"));
}

#[tokio::test]
async fn unknown_route_key() {
    let errs = errors_of("- route:\n    idd: r\n    from: {uri: direct:a}\n").await;
    assert!(
        matches!(&errs.0[0].kind, RouteErrorKind::UnknownKey { suggestion: Some(s), .. } if s == "id")
    );
}

#[tokio::test]
async fn bad_expression_reports_its_column() {
    let errs = errors_of(
        "- from:\n    uri: direct:a\n    steps:\n      - set_body: {simple: 'ok ${header.x'}\n",
    )
    .await;
    let e = &errs.0[0];
    let RouteErrorKind::Expression(x) = &e.kind else {
        panic!("unexpected {e}")
    };
    assert!(x.column > 1, "{x:?}");
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(4));
    assert!(e.to_string().contains("column"), "{e}");
}

#[tokio::test]
async fn unknown_component_scheme() {
    let errs = errors_of("- from:\n    uri: direct:a\n    steps:\n      - to: dirrect:b\n").await;
    let e = &errs.0[0];
    assert!(matches!(e.kind, RouteErrorKind::UnknownComponent(_)), "{e}");
    assert!(e.to_string().contains("did you mean `direct`"), "{e}");
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(4));
}

#[tokio::test]
async fn missing_from() {
    let errs = errors_of("- route:\n    id: lonely\n").await;
    let e = &errs.0[0];
    assert!(matches!(e.kind, RouteErrorKind::MissingFrom), "{e}");
    assert_eq!(e.route_id.as_deref(), Some("lonely"));
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(1));
}

#[tokio::test]
async fn duplicate_route_id_names_both_places() {
    let errs = errors_of(
        "- route:\n    id: twin\n    from: {uri: direct:a}\n- route:\n    id: twin\n    from: {uri: direct:b}\n",
    )
    .await;
    let e = &errs.0[0];
    let RouteErrorKind::DuplicateRouteId { id, first } = &e.kind else {
        panic!("unexpected {e}")
    };
    assert_eq!(id, "twin");
    assert_eq!(first.as_ref().map(|l| l.line), Some(1));
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(4));
}

#[tokio::test]
async fn wrong_value_type() {
    let errs = errors_of("- route:\n    startup_order: soon\n    from: {uri: direct:a}\n").await;
    let e = &errs.0[0];
    assert!(matches!(e.kind, RouteErrorKind::InvalidValue(_)), "{e}");
    assert!(e.to_string().contains("startup_order"), "{e}");
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(2));
}

#[tokio::test]
async fn every_error_is_listed_not_just_the_first() {
    let errs = errors_of(concat!(
        "- from:\n    uri: direct:a\n    steps:\n      - to: nope:x\n",
        "- from:\n    uri: direct:b\n    steps:\n      - set_body: {simple: '${'}\n",
    ))
    .await;
    assert_eq!(errs.0.len(), 2, "{errs}");
}

#[tokio::test]
async fn yaml_syntax_error_has_position() {
    let errs = errors_of("- from:\n    uri: direct:a\n   steps: [\n").await;
    let e = &errs.0[0];
    assert!(matches!(e.kind, RouteErrorKind::Syntax(_)), "{e}");
    assert!(e.location.as_ref().is_some_and(|l| l.line >= 2), "{e}");
}

#[tokio::test]
async fn unknown_endpoint_parameter() {
    let errs =
        errors_of("- from:\n    uri: direct:a\n    steps:\n      - to: 'log:x?levle=INFO'\n").await;
    let e = &errs.0[0];
    assert!(matches!(e.kind, RouteErrorKind::Endpoint(_)), "{e}");
    assert!(e.to_string().contains("level"), "{e}");
}

#[tokio::test]
async fn errors_inside_choice_and_multicast_branches_have_a_path_and_a_place() {
    let errs = errors_of(
        "- route:\n    id: r1\n    from:\n      uri: direct:a\n      steps:\n        - choice:\n            when:\n              - simple: \"${body} == 'a'\"\n                steps:\n                  - set_heder: {name: x, constant: y}\n- route:\n    id: r2\n    from:\n      uri: direct:b\n      steps:\n        - multicast:\n            steps:\n              - to: log:a\n              - set_bodyy: {constant: b}\n",
    )
    .await;
    let paths: Vec<_> = errs
        .0
        .iter()
        .map(|e| e.step.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        paths,
        [
            "steps[0].choice.when[0].steps[0].set_heder",
            "steps[0].multicast.steps[1].set_bodyy"
        ],
        "{errs:?}"
    );
    let lines: Vec<_> = errs
        .0
        .iter()
        .map(|e| e.location.as_ref().map(|l| l.line))
        .collect();
    assert_eq!(lines, [Some(10), Some(19)]);
}

// Issue 10, items 9, 12 and 13: input that used to pass silently or be reported
// without a place is an error with its file, line and column, on one line.

/// The one error of `text`, checked to be a single line starting with its location.
async fn one_error(text: &str, line: usize, column: usize) -> camel_core::RouteError {
    let mut errs = errors_of(text).await;
    assert_eq!(errs.0.len(), 1, "{errs}");
    let e = errs.0.remove(0);
    let shown = e.to_string();
    assert!(!shown.contains('\n'), "one line: {shown}");
    assert!(
        shown.starts_with(&format!("routes.yaml:{line}:{column}: ")),
        "{shown}"
    );
    e
}

fn route_with_id(id: &str) -> String {
    format!("- route:\n    id: \"{id}\"\n    from: {{uri: direct:a}}\n")
}

#[tokio::test]
async fn route_ids_with_control_or_bidi_characters_are_refused() {
    for (id, code) in [
        ("a\\nINFO forged line", "U+000A"),
        ("a\\0b", "U+0000"),
        ("a\\u202Eb", "U+202E"),
        ("a\\u2066b", "U+2066"),
        ("a\\x1b[31mred", "U+001B"),
    ] {
        let e = one_error(&route_with_id(id), 2, 5).await;
        assert!(matches!(e.kind, RouteErrorKind::InvalidValue(_)), "{e}");
        assert!(e.to_string().contains(code), "{id}: {e}");
        assert!(e.route_id.is_none(), "the refused id is not echoed: {e}");
    }
}

#[tokio::test]
async fn route_ids_have_a_maximum_length() {
    let long = "r".repeat(camel_core::model::MAX_ROUTE_ID_BYTES + 1);
    let e = one_error(&route_with_id(&long), 2, 5).await;
    assert!(e.to_string().contains("at most 256 bytes"), "{e}");
    let longest = "r".repeat(camel_core::model::MAX_ROUTE_ID_BYTES);
    let routes = camel_core::yaml::load_str(&route_with_id(&longest), "routes.yaml").unwrap();
    CamelContext::new().validate(&routes).await.unwrap();
}

#[tokio::test]
async fn builder_routes_get_the_same_id_check() {
    let mut route = RouteDefinition::from("direct:a");
    route.id = Some("a\nb".into());
    let errs = CamelContext::new().validate(&[route]).await.unwrap_err();
    assert!(errs.to_string().contains("U+000A"), "{errs}");
    assert!(!errs.to_string().contains('\n'), "{errs}");
}

#[tokio::test]
async fn a_bad_regex_is_one_located_line() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - filter:\n          simple: \"${body} regex 'a(b'\"\n          steps: [stop]\n",
        5,
        11,
    )
    .await;
    assert!(matches!(e.kind, RouteErrorKind::Expression(_)), "{e}");
    let shown = e.to_string();
    assert!(
        shown.contains("unclosed group (at column 2 of the pattern)"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_misspelt_language_key_is_an_unknown_key() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - set_header: {name: ver, simpl: \"x\"}\n",
        4,
        33,
    )
    .await;
    match &e.kind {
        RouteErrorKind::UnknownKey {
            key, suggestion, ..
        } => {
            assert_eq!(key, "simpl");
            assert_eq!(suggestion.as_deref(), Some("simple"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(e.to_string().contains("did you mean `simple`"), "{e}");
}

#[tokio::test]
async fn a_nul_byte_in_the_file_is_a_located_error() {
    // The parser used to stop at the NUL: `hi` was logged and the rest of the file dropped.
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - log: hi\0there\n      - to: nope:x\n",
        4,
        16,
    )
    .await;
    assert!(matches!(e.kind, RouteErrorKind::Syntax(_)), "{e}");
    assert!(e.to_string().contains("U+0000"), "{e}");
}

#[tokio::test]
async fn an_unsupported_method_call_in_simple_is_refused_where_it_starts() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - set_body: {simple: \"n=${header.foo.frobnicate()}\"}\n",
        4,
        20,
    )
    .await;
    let RouteErrorKind::Expression(x) = &e.kind else {
        panic!("unexpected {e}")
    };
    assert_eq!(x.column, 16, "at `frobnicate()`: {x}");
    assert!(x.message.contains("unsupported method `frobnicate`"), "{x}");
}

#[tokio::test]
async fn unresolvable_property_placeholders_are_located_and_named() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - to: \"file:{{folderName}}\"\n",
        4,
        9,
    )
    .await;
    assert!(e.to_string().contains("`{{folderName}}`"), "{e}");
    assert!(e.to_string().contains("no property `folderName`"), "{e}");
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - to: {uri: \"file:/tmp/x\", parameters: {file_name: \"{{name}}.txt\"}}\n",
        4,
        47,
    )
    .await;
    assert!(e.to_string().contains("no property `name`"), "{e}");
}

#[tokio::test]
async fn unknown_keys_in_typed_configs_are_located_at_the_key() {
    // Inside a list (`when[0]`) and inside a nested map (`json`), the error names the key
    // where it is written and the nearest known one.
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - choice:\n          when:\n            - simple: 'true'\n              stesp: []\n",
        7,
        15,
    )
    .await;
    assert!(
        matches!(&e.kind, RouteErrorKind::UnknownKey { key, suggestion: Some(s), .. } if key == "stesp" && s == "steps"),
        "{e}"
    );
    assert_eq!(e.step.as_deref(), Some("steps[0].choice"));
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - marshal: {json: {prettyPrnt: true}}\n",
        4,
        26,
    )
    .await;
    assert!(e.to_string().contains("did you mean `prettyPrint`"), "{e}");
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - multicast: {parallelProcesing: true, steps: []}\n",
        4,
        21,
    )
    .await;
    assert!(e.to_string().contains("did you mean"), "{e}");
}

#[tokio::test]
async fn a_nested_item_that_is_not_a_step_is_located() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - filter:\n          simple: 'true'\n          steps:\n            - 3\n",
        7,
        15,
    )
    .await;
    assert!(e.to_string().contains("exactly one key"), "{e}");
    assert_eq!(e.step.as_deref(), Some("steps[0].filter"));
}

#[tokio::test]
async fn a_misspelt_key_of_to_is_refused_and_camels_node_id_accepted() {
    let e = one_error(
        "- from:\n    uri: direct:a\n    steps:\n      - to: {uri: 'log:x', paramters: {level: INFO}}\n",
        4,
        28,
    )
    .await;
    assert!(e.to_string().contains("did you mean `parameters`"), "{e}");
    let routes = camel_core::yaml::load_str(
        "- from:\n    uri: direct:a\n    steps:\n      - to: {id: send, uri: 'log:x'}\n",
        "routes.yaml",
    )
    .unwrap();
    CamelContext::new().validate(&routes).await.unwrap();
}
