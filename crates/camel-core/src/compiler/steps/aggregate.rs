//! `aggregate`: groups exchanges by a correlation key and runs `steps` on each completed
//! group; a lifecycle per step (timers, stop, hot-swap hand-over).
//!
//! ```yaml
//! - aggregate:
//!     correlation_expression: {header: orderId}     # correlationExpression in Camel
//!     aggregation_strategy: GroupedBodyAggregationStrategy
//!     completion_size: 3
//!     completion_timeout: 2s
//!     steps:
//!       - to: log:orders
//! ```

use std::sync::Arc;

use camel_api::BoxProcessor;
use camel_eip::aggregate::{Aggregator, AggregatorOptions, AggregatorParts, SharedRepository};
use camel_eip::config::Aggregate;
use camel_eip::state::{StoreFactory, STORE_FACTORY};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// A repository named by a step: a context resource of type `T` (`name` or `#name`), or a
/// database URL built by the store factory the application registered (the `camel` binary
/// registers `camel-state`'s). `what` names the kind in messages; errors are located at
/// `at`.
pub(crate) fn repository<T: Clone + Send + Sync + 'static>(
    name: &str,
    what: &str,
    at: &str,
    cx: &StepContext<'_>,
    from_url: impl FnOnce(&dyn StoreFactory, &str) -> Result<T, camel_api::CamelError>,
) -> Result<T, RouteError> {
    let invalid = |message: String| cx.error_at(at, RouteErrorKind::InvalidValue(message));
    let reference = name.strip_prefix('#').unwrap_or(name);
    if let Some(resource) = cx.registry.resource(reference) {
        return resource
            .downcast::<T>()
            .map(|r| (*r).clone())
            .map_err(|_| invalid(format!("the resource `{reference}` is not an {what}")));
    }
    if !name.contains(':') {
        return Err(invalid(format!(
            "no {what} is registered under `{name}` (name a context resource or write a database URL: postgres://… or sqlite:…)"
        )));
    }
    let factory = cx
        .registry
        .resource(STORE_FACTORY)
        .and_then(|r| r.downcast::<Arc<dyn StoreFactory>>().ok())
        .ok_or_else(|| {
            invalid(format!(
                "`{}` is a database URL, but no state store is registered (the `camel` binary registers one; from Rust call `camel_state::register`)",
                camel_api::redact_url(name)
            ))
        })?;
    from_url(&**factory, name).map_err(|e| cx.error_at(at, RouteErrorKind::Endpoint(e)))
}

pub(super) fn aggregate(
    config: Aggregate,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let correlation = cx.expression(&config.correlation_expression, "/correlation_expression")?;
    let strategy =
        super::strategy::strategy(&config.aggregation_strategy, "/aggregation_strategy", cx)?;
    let completion_size = match &config.completion_size_expression {
        Some(e) => Some(cx.expression(e, "/completion_size_expression")?),
        None => None,
    };
    let completion_timeout = match &config.completion_timeout_expression {
        Some(e) => Some(cx.expression(e, "/completion_timeout_expression")?),
        None => None,
    };
    let completion_predicate = match &config.completion_predicate {
        Some(e) => Some(cx.predicate(e, "/completion_predicate")?),
        None => None,
    };
    let completes = config.completion_size.is_some()
        || completion_size.is_some()
        || config.completion_timeout.is_some()
        || completion_timeout.is_some()
        || config.completion_interval.is_some()
        || completion_predicate.is_some()
        || config.completion_from_batch_consumer
        || config.completion_on_new_correlation_group;
    if !completes {
        return Err(cx.error(RouteErrorKind::Missing(
            "a completion condition (completion_size, completion_timeout, completion_interval, completion_predicate, completion_from_batch_consumer or completion_on_new_correlation_group)".into(),
        )));
    }
    if config.completion_size == Some(0) {
        return Err(cx.error_at(
            "/completion_size",
            RouteErrorKind::InvalidValue("completion_size must be at least 1".into()),
        ));
    }
    // Stable across swaps of the same route: the node id when given, else the path.
    let step_name = match &config.id {
        Some(id) => format!("aggregate#{id}"),
        None => cx.path().to_string(),
    };
    let logical = format!(
        "{}/{}",
        cx.route_id(),
        config.id.as_deref().unwrap_or(cx.path())
    );
    let repository = match &config.aggregation_repository {
        Some(name) => Some(repository::<SharedRepository>(
            name,
            "aggregation repository",
            "/aggregation_repository",
            cx,
            |factory, url| factory.aggregation(url, &logical),
        )?),
        None => None,
    };
    if config.use_recovery && repository.is_none() {
        tracing::warn!(route_id = %cx.route_id(), step = %cx.path(), "use_recovery with the in-memory repository only redelivers within this process");
    }
    let dead_letter = match &config.dead_letter_uri {
        None => None,
        Some(uri) => Some(cx.producer(uri, "/dead_letter_uri")?),
    };
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    let parts = AggregatorParts {
        correlation,
        strategy,
        completion_size,
        completion_timeout,
        completion_predicate,
        repository,
        steps,
        dead_letter,
    };
    let built = Aggregator::build(
        cx.route_id(),
        &step_name,
        AggregatorOptions::from(&config),
        parts,
    );
    cx.add_lifecycle(built.lifecycle);
    Ok(built.processor)
}
