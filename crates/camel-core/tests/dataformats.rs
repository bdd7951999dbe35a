//! `marshal`/`unmarshal` data formats through routes: YAML in Camel's shape and spelling,
//! builder parity, round trips, and located errors for bad configuration.

use camel_api::{Body, CamelError, Exchange};
use camel_core::builder::{DataFormat, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition, RouteErrorKind};

/// One route `direct:in` → `steps` (YAML, indented under `steps:`).
fn route_yaml(steps: &str) -> String {
    let body: String = steps.lines().map(|l| format!("        {l}\n")).collect();
    format!("- route:\n    id: r\n    from:\n      uri: direct:in\n      steps:\n{body}")
}

fn load(steps: &str) -> RouteDefinition {
    let text = route_yaml(steps);
    camel_core::yaml::load_str(&text, "formats.yaml")
        .unwrap_or_else(|e| panic!("{e}\n---\n{text}"))
        .remove(0)
}

async fn send(route: RouteDefinition, body: impl Into<Body>) -> Result<Body, CamelError> {
    let ctx = CamelContext::new();
    ctx.add_routes(vec![route])
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    let out = ctx.request("direct:in", Exchange::new(body.into())).await;
    ctx.stop().await;
    out.map(|ex| ex.message.body)
}

fn text(body: &Body) -> String {
    body.as_text().map(|t| t.into_owned()).unwrap_or_default()
}

/// The YAML and the builder give the same definition and the same output.
async fn parity(steps: &str, b: RouteBuilder, input: &str) -> Body {
    let y = load(steps);
    let b = b.id("r").build();
    assert_eq!(y, b, "YAML and builder definitions differ");
    let from_yaml = send(y, input).await.unwrap();
    let from_builder = send(b, input).await.unwrap();
    assert_eq!(from_yaml, from_builder);
    from_yaml
}

#[tokio::test]
async fn csv_parity_with_options() {
    let out = parity(
        "- unmarshal: {csv: {delimiter: ';', use_maps: true, trim: true}}\n- marshal: {json: {}}",
        RouteBuilder::from("direct:in")
            .unmarshal(DataFormat::csv().delimiter(';').use_maps(true).trim(true))
            .marshal_json(),
        "id;name\n1; ann\n",
    )
    .await;
    assert_eq!(text(&out), r#"[{"id":"1","name":"ann"}]"#);

    let out = parity(
        "- unmarshal: {json: {unmarshal_type: List}}\n- marshal: {csv: {header: [a, b], quote: \"'\"}}",
        RouteBuilder::from("direct:in")
            .unmarshal(DataFormat::json().unmarshal_type("List"))
            .marshal(DataFormat::csv().header(["a", "b"]).quote('\'')),
        r#"[{"a": "x,y", "b": 2}]"#,
    )
    .await;
    assert_eq!(text(&out), "a,b\n'x,y',2\n");
}

#[tokio::test]
async fn xml_base64_gzip_zip_parity() {
    let out = parity(
        "- unmarshal: {jackson_xml: {}}\n- marshal: {jackson_xml: {root_name: o, pretty_print: true}}",
        RouteBuilder::from("direct:in")
            .unmarshal(DataFormat::xml())
            .marshal(DataFormat::xml().root_name("o").pretty_print(true)),
        "<order id='1'><l>a</l><l>b</l></order>",
    )
    .await;
    assert_eq!(
        text(&out),
        "<o>\n  <id>1</id>\n  <l>a</l>\n  <l>b</l>\n</o>"
    );

    for (format, builder) in [
        (
            "base64: {line_length: 8, url_safe: true}",
            DataFormat::from(DataFormat::base64().line_length(8).url_safe(true)),
        ),
        ("gzip: {}", DataFormat::from(DataFormat::gzip())),
        ("zip: {}", DataFormat::from(DataFormat::zip())),
    ] {
        let out = parity(
            &format!(
                "- marshal: {{{format}}}\n- unmarshal: {{{format}}}\n- convert_body_to: {{type: String}}"
            ),
            RouteBuilder::from("direct:in")
                .marshal(builder.clone())
                .unmarshal(builder)
                .convert_body_to(camel_core::builder::BodyType::Text),
            "a body that goes there and back ???",
        )
        .await;
        assert_eq!(
            text(&out),
            "a body that goes there and back ???",
            "{format}"
        );
    }
}

#[tokio::test]
async fn camel_spelling_is_accepted() {
    // Shapes and option names as in Camel's YAML DSL schema.
    let csv = load(concat!(
        "- unmarshal:\n",
        "    csv:\n",
        "      useMaps: true\n",
        "      skipHeaderRecord: false\n",
        "      ignoreSurroundingSpaces: true\n",
        "- marshal:\n",
        "    json: {prettyPrint: false, include: NON_NULL, disableFeatures: FAIL_ON_EMPTY_BEANS}\n",
    ));
    let out = send(csv, "k,v\na, 1\n").await.unwrap();
    assert_eq!(text(&out), r#"[{"k":"a","v":"1"}]"#);

    let chain = load(concat!(
        "- unmarshal:\n",
        "    jacksonXml: {unmarshalType: java.util.Map}\n",
        "- marshal:\n",
        "    jacksonXml:\n",
        "      rootName: rows\n",
        "      prettyPrint: false\n",
        "- marshal:\n",
        "    gzipDeflater: {}\n",
        "- unmarshal:\n",
        "    gzipDeflater: {}\n",
        "- marshal:\n",
        "    zipDeflater: {compressionLevel: 9}\n",
        "- unmarshal:\n",
        "    zipDeflater: {}\n",
        "- marshal:\n",
        "    base64: {lineLength: 76, urlSafe: false}\n",
        "- unmarshal: base64\n",
        "- convertBodyTo: String\n",
    ));
    let out = send(chain, "<r k='a'><v>1</v></r>").await.unwrap();
    assert_eq!(text(&out), "<rows><k>a</k><v>1</v></rows>");
}

#[tokio::test]
async fn a_scalar_names_the_format_with_its_defaults() {
    let out = send(load("- unmarshal: csv\n- marshal: json"), "a,b\n")
        .await
        .unwrap();
    assert_eq!(text(&out), r#"[["a","b"]]"#);
}

#[tokio::test]
async fn bad_input_is_a_conversion_error_that_says_where() {
    for (steps, input, want) in [
        ("- unmarshal: {csv: {header: [a]}}", "1\n2,3\n", "line 2"),
        ("- unmarshal: {jackson_xml: {}}", "<a><b></a>", "byte"),
        ("- unmarshal: {base64: {}}", "aGV!", "offset 3"),
        ("- unmarshal: {gzip: {}}", "plain", "input of 5 bytes"),
        (
            "- unmarshal: {json: {unmarshal_type: Map}}",
            "[]",
            "asks for a map",
        ),
    ] {
        let err = send(load(steps), input).await.unwrap_err();
        assert!(
            matches!(err, CamelError::Conversion { .. }),
            "{steps}: {err}"
        );
        assert!(err.to_string().contains(want), "{steps}: {err}");
    }
    // The body stays usable for the error handler: a JSON value where text is expected.
    let err = send(
        load("- unmarshal: {json: {}}\n- unmarshal: {csv: {}}"),
        "[1]",
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("already a parsed value"), "{err}");
}

async fn config_error(steps: &str) -> camel_core::RouteError {
    let routes = camel_core::yaml::load_str(&route_yaml(steps), "formats.yaml").unwrap();
    let mut errs = CamelContext::new()
        .validate(&routes)
        .await
        .expect_err("the route should not validate");
    errs.0.remove(0)
}

#[tokio::test]
async fn camel_formats_we_lack_are_known_but_unsupported() {
    for (steps, line) in [
        ("- marshal: {yaml: {}}", 6),
        ("- unmarshal:\n    univocityCsv: {}", 7),
        ("- marshal: protobuf", 6),
    ] {
        let e = config_error(steps).await;
        let text = e.to_string();
        assert!(
            text.contains("is a Camel data format that camel-rs does not support yet"),
            "{text}"
        );
        assert_eq!(e.location.as_ref().map(|l| l.line), Some(line), "{text}");
    }
}

#[tokio::test]
async fn unknown_formats_suggest_the_nearest() {
    let e = config_error("- marshal:\n    cvs: {}").await;
    match &e.kind {
        RouteErrorKind::UnknownKey {
            key, suggestion, ..
        } => {
            assert_eq!(key, "cvs");
            assert_eq!(suggestion.as_deref(), Some("csv"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(7), "{e}");
}

#[tokio::test]
async fn bad_options_are_located() {
    let e = config_error("- marshal:\n    csv:\n      delimiter: ';;'").await;
    assert!(e.to_string().contains("not one ASCII character"), "{e}");
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(8), "{e}");

    let e = config_error("- marshal:\n    csv: {delimter: ';'}").await;
    assert!(
        matches!(&e.kind, RouteErrorKind::UnknownKey { suggestion: Some(s), .. } if s == "delimiter"),
        "{e}"
    );

    let e = config_error("- marshal: {csv: {}, json: {}}").await;
    assert!(e.to_string().contains("one data format per step"), "{e}");

    let e = config_error("- marshal: {}").await;
    assert!(e.to_string().contains("a data format"), "{e}");
}

#[tokio::test]
async fn builder_json_shortcuts_still_work() {
    let route = RouteBuilder::from("direct:in")
        .id("r")
        .unmarshal_json()
        .marshal(DataFormat::json().pretty_print(true))
        .build();
    let out = send(route, r#"{"a":[1]}"#).await.unwrap();
    assert_eq!(text(&out), "{\n  \"a\": [\n    1\n  ]\n}");
}
