//! Steps that send to endpoints named while the route runs: `recipient_list`,
//! `routing_slip`, `dynamic_router`, `to_d` (ADR 0060). Their endpoints are resolved
//! through the context's components by a weak handle on the registry and kept in a
//! bounded cache per step, drained with the route.
//!
//! ```yaml
//! - recipient_list: {header: to, parallel_processing: true, aggregation_strategy: grouped_body}
//! - routing_slip: {header: slip, uri_delimiter: ";"}
//! - dynamic_router: {simple: "${header.next}"}
//! - to_d: "file:out/${header.region}"
//! ```

use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Endpoint, Poller};
use camel_eip::aggregation::SharedStrategy;
use camel_eip::config::{DynamicRouter, RecipientList, RoutingSlip, ToD};
use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver, DEFAULT_DELIMITER};
use camel_eip::recipient_list::{RecipientList as RecipientListStep, RecipientListOptions};
use camel_eip::routing_slip::RoutingSlip as Slip;

use crate::compiler::StepContext;
use crate::compiler::WeakRegistry;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::EndpointDefinition;

/// Resolves URIs through the context's components while a route runs.
#[derive(Debug)]
struct RegistryResolver {
    registry: WeakRegistry,
    route_id: String,
}

impl EndpointResolver for RegistryResolver {
    fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
        let registry = self
            .registry
            .upgrade()
            .ok_or_else(|| CamelError::Stopping("the route's context is gone".into()))?;
        registry
            .runtime_endpoint(&EndpointDefinition::new(uri), Some(&self.route_id))
            .map_err(|kind| match kind {
                RouteErrorKind::Endpoint(e) | RouteErrorKind::UnknownComponent(e) => e,
                other => CamelError::invalid_uri(uri.to_string(), other),
            })
    }
}

fn resolver(cx: &StepContext<'_>) -> Arc<dyn EndpointResolver> {
    Arc::new(RegistryResolver {
        registry: cx.registry.downgrade(),
        route_id: cx.route_id().to_string(),
    })
}

/// A producer cache for this step, drained with the route.
pub(super) fn producers(
    cx: &mut StepContext<'_>,
    size: CacheSize,
) -> Arc<EndpointCache<BoxProcessor>> {
    let cache = Arc::new(EndpointCache::producers(resolver(cx), size));
    cx.add_lifecycle(cache.lifecycle(format!("endpoints@{}", cx.path())));
    cache
}

/// A poller cache for this step, drained with the route.
pub(super) fn pollers(
    cx: &mut StepContext<'_>,
    size: CacheSize,
) -> Arc<EndpointCache<Arc<dyn Poller>>> {
    let cache = Arc::new(EndpointCache::pollers(resolver(cx), size));
    cx.add_lifecycle(cache.lifecycle(format!("endpoints@{}", cx.path())));
    cache
}

/// The aggregation strategy of an optional `aggregation_strategy` option.
pub(super) fn strategy(
    cx: &StepContext<'_>,
    name: Option<&str>,
    at: &str,
) -> Result<Option<SharedStrategy>, RouteError> {
    name.map(|n| super::strategy::strategy(n, at, cx))
        .transpose()
}

/// A URI without `${…}` is checked now, so a typo in a fixed URI is an error with its
/// line rather than a failure of every exchange.
pub(super) fn check_fixed_uri(
    cx: &StepContext<'_>,
    template: &str,
    at: &str,
) -> Result<(), RouteError> {
    if template.contains("${") {
        // The scheme is known when it comes before the first `${`: a component camel-rs
        // lacks is refused now rather than at the first message.
        let Some((scheme, _)) = template.trim_start().split_once(':') else {
            return Ok(());
        };
        if scheme.contains("${") || scheme.is_empty() || cx.registry.component(scheme).is_some() {
            return Ok(());
        }
        let message =
            crate::model::camel_dsl::unsupported(crate::model::camel_dsl::Kind::Component, scheme)
                .unwrap_or_else(|| format!("no component for scheme `{scheme}` (in `{template}`)"));
        return Err(cx.error_at(at, RouteErrorKind::InvalidValue(message)));
    }
    cx.registry
        .endpoint(&EndpointDefinition::new(template), Some(cx.route_id()))
        .map(|_| ())
        .map_err(|kind| cx.error_at(at, kind))
}

/// Whether a `to_d` template puts a `${…}` into the statement of a `sql:` endpoint (its
/// path, or its `query` option).
fn splices_into_a_statement(template: &str) -> bool {
    let Some(rest) = template.trim_start().strip_prefix("sql:") else {
        return false;
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    path.contains("${")
        || query
            .split('&')
            .any(|pair| pair.starts_with("query=") && pair.contains("${"))
}

pub(super) fn recipient_list(
    config: RecipientList,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.uri_expression_in(&config, "")?;
    let strategy = strategy(
        cx,
        config.aggregation_strategy.as_deref(),
        "/aggregation_strategy",
    )?;
    let options = RecipientListOptions {
        delimiter: config
            .delimiter
            .clone()
            .unwrap_or_else(|| DEFAULT_DELIMITER.into()),
        parallel: config.parallel_processing,
        stop_on_exception: config.stop_on_exception,
        ignore_invalid_endpoints: config.ignore_invalid_endpoints,
        timeout: config.timeout.map(std::time::Duration::from_millis),
    };
    let cache = producers(cx, config.cache());
    Ok(RecipientListStep::new(expression, cache, strategy, options).into_processor())
}

pub(super) fn routing_slip(
    config: RoutingSlip,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.uri_expression_in(&config, "")?;
    let cache = producers(cx, CacheSize::from_option(config.cache_size));
    let delimiter = config.uri_delimiter.as_deref().unwrap_or(DEFAULT_DELIMITER);
    Ok(Slip::slip(
        expression,
        cache,
        delimiter,
        config.ignore_invalid_endpoints,
    )
    .into_processor())
}

pub(super) fn dynamic_router(
    config: DynamicRouter,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.uri_expression_in(&config, "")?;
    let cache = producers(cx, CacheSize::from_option(config.cache_size));
    let delimiter = config.uri_delimiter.as_deref().unwrap_or(DEFAULT_DELIMITER);
    Ok(Slip::dynamic_router(
        expression,
        cache,
        delimiter,
        config.ignore_invalid_endpoints,
    )
    .into_processor())
}

pub(super) fn to_d(config: ToD, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let template = config.template();
    if !config.raw_values && splices_into_a_statement(&template) {
        return Err(cx.error_at(
            "/uri",
            RouteErrorKind::InvalidValue(
                "a `toD` to `sql:` splices a value into the SQL statement, where no encoding \
                 makes it safe (a value such as `id` or `x--` changes the statement); write a \
                 fixed statement with parameters instead (`to: \"sql:… where id = :#id\"` or \
                 `:#${header.id}`), or set `raw_values: true` if every value is the route's own"
                    .into(),
            ),
        ));
    }
    let uri = cx.uri_template(&template, config.raw_values, "/uri")?;
    if !config.ignore_invalid_endpoint {
        check_fixed_uri(cx, &template, "/uri")?;
    }
    let cache = producers(cx, CacheSize::from_option(config.cache_size));
    Ok(Slip::to_dynamic(uri, cache, config.ignore_invalid_endpoint).into_processor())
}
