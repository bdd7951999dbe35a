//! One test per kind of route error: each says where and why.

use camel_core::{CamelContext, RouteErrorKind, RouteErrors};

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
