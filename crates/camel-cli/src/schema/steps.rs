//! The one list of the steps a route may write, each with the typed configuration its
//! compiler decodes (ADR 0130). A test checks it against the step registry of the context
//! `camel run` builds, so a step registered without a line here fails CI.

use camel_api::definition::StepConfig;
use camel_core::model::{BeanStep, EndpointDefinition, LayerStep};
use camel_eip::config as eip;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Value as Json};

/// Every step name (snake_case) and the schema of what it takes.
pub(super) fn steps(g: &mut SchemaGenerator) -> Vec<(&'static str, Json)> {
    vec![
        ("to", typed::<EndpointDefinition>(g)),
        ("process", typed::<camel_core::model::Process>(g)),
        ("bean", typed::<BeanStep>(g)),
        ("log", typed::<eip::Log>(g)),
        ("set_header", typed::<eip::SetHeader>(g)),
        ("set_headers", typed::<eip::SetHeaders>(g)),
        ("set_property", typed::<eip::SetProperty>(g)),
        ("set_body", typed::<eip::SetBody>(g)),
        ("transform", typed::<eip::SetBody>(g)),
        ("remove_header", typed::<eip::RemoveHeader>(g)),
        ("remove_headers", typed::<eip::RemoveHeaders>(g)),
        ("remove_property", typed::<eip::RemoveProperty>(g)),
        ("set_variable", typed::<eip::SetVariable>(g)),
        ("set_variables", typed::<eip::SetVariables>(g)),
        ("remove_variable", typed::<eip::RemoveVariable>(g)),
        ("convert_variable_to", typed::<eip::ConvertVariableTo>(g)),
        ("stop", typed::<eip::Stop>(g)),
        ("filter", typed::<eip::Filter>(g)),
        ("choice", typed::<eip::Choice>(g)),
        ("do_switch", typed::<eip::Choice>(g)),
        // Camel's older `switch` has choice's shape (4.23's `selector`/`case` is refused).
        ("switch", typed::<eip::Choice>(g)),
        ("marshal", data_format::<eip::Marshal>(g)),
        ("unmarshal", data_format::<eip::Unmarshal>(g)),
        ("convert_body_to", typed::<eip::ConvertBodyTo>(g)),
        ("resequence", resequence(g)),
        ("multicast", typed::<eip::Multicast>(g)),
        ("scatter_gather", typed::<eip::Multicast>(g)),
        ("transacted", typed::<eip::Transacted>(g)),
        ("layer", typed::<LayerStep>(g)),
        ("policy", typed::<eip::Policy>(g)),
        ("throw_exception", typed::<eip::ThrowException>(g)),
        ("do_try", typed::<eip::DoTry>(g)),
        ("split", typed::<eip::Split>(g)),
        ("throttle", typed::<eip::Throttle>(g)),
        ("delay", typed::<eip::Delay>(g)),
        ("sample", typed::<eip::Sample>(g)),
        ("loop", typed::<eip::Loop>(g)),
        ("sort", typed::<eip::Sort>(g)),
        ("aggregate", typed::<eip::Aggregate>(g)),
        ("idempotent_consumer", typed::<eip::IdempotentConsumer>(g)),
        ("recipient_list", typed::<eip::RecipientList>(g)),
        ("routing_slip", typed::<eip::RoutingSlip>(g)),
        ("dynamic_router", typed::<eip::DynamicRouter>(g)),
        ("to_d", typed::<eip::ToD>(g)),
        ("wire_tap", typed::<eip::WireTap>(g)),
        ("enrich", typed::<eip::Enrich>(g)),
        ("poll_enrich", typed::<eip::PollEnrich>(g)),
        ("claim_check", typed::<eip::ClaimCheck>(g)),
        ("load_balance", typed::<eip::LoadBalance>(g)),
        ("circuit_breaker", typed::<eip::CircuitBreaker>(g)),
        ("validate", typed::<eip::Validate>(g)),
        ("set_exchange_pattern", typed::<eip::SetExchangePattern>(g)),
        ("step", typed::<eip::Step>(g)),
        ("convert_header_to", typed::<eip::ConvertHeaderTo>(g)),
        (
            "rest_request_validation",
            typed::<camel_core::rest::validation::RequestValidation>(g),
        ),
        // Rewritten into a `to: kamelet:NAME` when the file loads (ADR 0116).
        ("kamelet", kamelet()),
        // The first step of an interceptor: when it applies (ADR 0090).
        ("when", schema_of::<eip::When>(g, false, false)),
        (
            "when_skip_send_to_endpoint",
            schema_of::<eip::When>(g, false, false),
        ),
        // Among a route's own steps, as Camel's Java DSL places it: the route's clause.
        (
            "on_exception",
            schema_of::<eip::OnException>(g, false, true),
        ),
    ]
}

/// A step configured by `C`: its map of options, a scalar where `C` has a shorthand
/// (`- to: log:x`), and nothing at all (`- stop`) where no option is required.
fn typed<C: StepConfig + JsonSchema>(g: &mut SchemaGenerator) -> Json {
    let scalar = C::from_scalar("x").is_some();
    let empty = serde_json::from_value::<C>(json!({})).is_ok();
    schema_of::<C>(g, scalar, empty)
}

/// A map of options (`C`), else one of the scalars allowed: `if`/`then`/`else` on the
/// type rather than `anyOf`, so a validator reports the error inside the map.
fn schema_of<C: JsonSchema>(g: &mut SchemaGenerator, scalar: bool, empty: bool) -> Json {
    let options = g.subschema_for::<C>().to_value();
    let mut others: Vec<&str> = Vec::new();
    if scalar {
        others.extend(["string", "number", "boolean"]);
    }
    if empty {
        others.push("null");
    }
    let otherwise = if others.is_empty() {
        json!({"type": "object"})
    } else {
        json!({"description": "The shorthand (the step's one main option), or nothing for no options.", "type": others})
    };
    json!({"if": {"type": "object"}, "then": options, "else": otherwise})
}

/// True when a step's schema (from [`schema_of`]) lets it be written with no options.
pub(super) fn takes_nothing(schema: &Json) -> bool {
    match &schema["else"]["type"] {
        Json::Array(types) => types.iter().any(|t| t == "null"),
        _ => false,
    }
}

/// `marshal`/`unmarshal`: a format with its options, or a format's name.
fn data_format<C: StepConfig + JsonSchema>(g: &mut SchemaGenerator) -> Json {
    let names: Vec<&str> = eip::DATA_FORMAT_NAMES
        .iter()
        .copied()
        .filter(|n| C::from_scalar(n).is_some())
        .collect();
    json!({
        "if": {"type": "object"},
        "then": g.subschema_for::<C>().to_value(),
        "else": {"description": "A format with its default options.", "type": "string", "enum": names}
    })
}

/// `resequence`: ours (`{stream: {sequence, …}}`, `{batch: {sort, …}}`) or Camel's, with
/// the expression beside the mode (`{simple: "${header.seq}", stream_config: {…}}`),
/// which [`camel_resequence`] derives from ours.
fn resequence(g: &mut SchemaGenerator) -> Json {
    let ours = g.subschema_for::<eip::Resequence>().to_value();
    json!({"anyOf": [ours, {"$ref": format!("#/$defs/{CAMEL_RESEQUENCE}")}]})
}

/// The name of the definition of Camel's spelling of `resequence`.
pub(super) const CAMEL_RESEQUENCE: &str = "CamelResequence";

/// Camel's spelling of `resequence` from ours (`ours`, its definition): the expression
/// (`simple`, or `expression: {simple: …}`) beside the mode, so the mode's own expression
/// is not required.
pub(super) fn camel_resequence(ours: &Json) -> Json {
    let mut camel = ours.clone();
    let Some(map) = camel.as_object_mut() else {
        return camel;
    };
    if let Some(Json::Object(properties)) = map.get_mut("properties") {
        for (key, mode) in properties.iter_mut() {
            let snake = camel_api::suggest::to_snake_case(key);
            if matches!(
                snake.as_str(),
                "stream" | "stream_config" | "batch" | "batch_config"
            ) {
                *mode = json!({"description": "The mode's options, its expression given beside it.", "type": ["object", "null"]});
            }
        }
        properties.insert(
            "simple".into(),
            json!({"description": "The sequence (stream) or sort (batch) expression.", "type": "string"}),
        );
        properties.insert(
            "expression".into(),
            json!({"type": "object", "properties": {"simple": {"type": "string"}}, "required": ["simple"], "additionalProperties": false}),
        );
    }
    map.insert(
        "anyOf".into(),
        json!([{"required": ["simple"]}, {"required": ["expression"]}]),
    );
    camel
}

/// The `kamelet` step: a Kamelet's name, or `{name, parameters}`.
fn kamelet() -> Json {
    json!({
        "if": {"type": "object"},
        "then": {
            "description": "Sends to the Kamelet called `name` with its parameters.",
            "type": "object",
            "properties": {
                "name": {"description": "The Kamelet's name (`/ROUTE_ID` may follow).", "type": "string"},
                "parameters": {"description": "The Kamelet's parameters.", "type": ["object", "null"]}
            },
            "required": ["name"],
            "additionalProperties": false
        },
        "else": {"description": "The Kamelet's name.", "type": "string"}
    })
}
