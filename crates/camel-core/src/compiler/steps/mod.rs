//! The built-in step compilers, one function per step over its typed configuration,
//! registered by name.

mod aggregate;
mod bean;
mod data;
mod dynamic;
mod endpoint;
mod enrich;
mod errors;
mod exchange;
mod idempotent;
pub(crate) mod layer;
mod looping;
mod message;
mod multicast;
mod policy;
pub(crate) mod resequence;
mod resilience;
mod routing;
mod split;
mod strategy;
mod timing;
mod transacted;
mod variable;

use super::{typed, StepRegistry};

pub(crate) fn register_builtin(r: &mut StepRegistry) {
    r.register("to", endpoint::BodyVariables(typed(endpoint::to)));
    r.register("process", typed(endpoint::process));
    r.register("bean", typed(bean::bean));
    r.register("log", typed(message::log));
    r.register("set_header", typed(message::set_header));
    r.register("set_headers", typed(message::set_headers));
    r.register("set_property", typed(message::set_property));
    r.register("set_body", typed(message::set_body));
    r.register("transform", message::Transform);
    r.register("remove_header", typed(message::remove_header));
    r.register("remove_headers", typed(message::remove_headers));
    r.register("remove_property", typed(message::remove_property));
    r.register("set_variable", typed(variable::set_variable));
    r.register("set_variables", typed(variable::set_variables));
    r.register("remove_variable", typed(variable::remove_variable));
    r.register("convert_variable_to", typed(variable::convert_variable_to));
    r.register("stop", typed(message::stop));
    r.register("filter", typed(routing::filter));
    r.register("choice", typed(routing::choice));
    // Camel's Switch EIP (`doSwitch`, Camel 3.15 to 4.22) has choice's shape; it picks its
    // branch once at start, which gives the same branch as choosing per exchange when
    // the predicates read only properties, as they must there.
    r.register("do_switch", typed(routing::choice));
    r.register("switch", routing::Switch);
    r.register("marshal", data::DataStep { marshal: true });
    r.register("unmarshal", data::DataStep { marshal: false });
    r.register("convert_body_to", typed(data::convert_body_to));
    r.register("resequence", resequence::Nested);
    r.register("multicast", typed(multicast::multicast));
    r.register("scatter_gather", typed(multicast::scatter_gather));
    r.register("transacted", typed(transacted::transacted));
    r.register("layer", typed(layer::layer));
    r.register("policy", typed(policy::policy));
    r.register("throw_exception", typed(errors::throw_exception));
    r.register("do_try", typed(errors::do_try));
    r.register("split", typed(split::split));
    r.register("throttle", typed(timing::throttle));
    r.register("delay", typed(timing::delay));
    r.register("sample", typed(timing::sample));
    r.register("loop", typed(looping::looping));
    r.register("sort", typed(looping::sort));
    r.register("aggregate", typed(aggregate::aggregate));
    r.register(
        "idempotent_consumer",
        typed(idempotent::idempotent_consumer),
    );
    r.register("recipient_list", typed(dynamic::recipient_list));
    r.register("routing_slip", typed(dynamic::routing_slip));
    r.register("dynamic_router", typed(dynamic::dynamic_router));
    r.register("to_d", endpoint::BodyVariables(typed(dynamic::to_d)));
    r.register("wire_tap", typed(enrich::wire_tap));
    r.register("enrich", typed(enrich::enrich));
    r.register("poll_enrich", typed(enrich::poll_enrich));
    r.register("claim_check", typed(enrich::claim_check));
    r.register("load_balance", typed(resilience::load_balance));
    r.register("circuit_breaker", typed(resilience::circuit_breaker));
    r.register("validate", typed(exchange::validate));
    r.register(
        "set_exchange_pattern",
        typed(exchange::set_exchange_pattern),
    );
    r.register("step", typed(exchange::step));
    r.register("convert_header_to", typed(exchange::convert_header_to));
    // Made by the REST expansion for `clientRequestValidation` (crate::rest::validation).
    r.register(
        "rest_request_validation",
        typed(|config, _cx: &mut super::StepContext<'_>| {
            Ok(crate::rest::validation::processor(config))
        }),
    );
}
