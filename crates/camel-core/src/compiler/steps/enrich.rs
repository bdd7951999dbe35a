//! `wire_tap`, `enrich`, `poll_enrich` (ADR 0061) and `claim_check` (ADR 0062).
//!
//! ```yaml
//! - wire_tap: {uri: "seda:audit", copy: true, on_prepare: [{set_header: {name: tapped, constant: "yes"}}]}
//! - enrich: {constant: "direct:prices", aggregation_strategy: prices}
//! - poll_enrich: {constant: "seda:latest", timeout: 1000}
//! - claim_check: {operation: Push}
//! ```

use std::sync::Arc;

use camel_api::BoxProcessor;
use camel_eip::claim_check::{ClaimCheck as ClaimCheckStep, ClaimCheckStore, MergeFilter};
use camel_eip::config::{
    ClaimCheck, ClaimCheckOperation, Enrich, OnPrepare, PollEnrich, WireTap,
    DEFAULT_TAP_CONCURRENCY, DEFAULT_TAP_QUEUE,
};
use camel_eip::dynamic::CacheSize;
use camel_eip::enrich::Enricher;
use camel_eip::wire_tap::{WireTap as Tap, WireTapOptions};

use super::dynamic::{check_fixed_uri, pollers, producers, strategy};
use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// The context resource holding the claim-check store (Camel's repository name).
const CLAIM_CHECK_STORE: &str = "CamelClaimCheckRepository";

pub(super) fn wire_tap(
    config: WireTap,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let template = config.template();
    let uri = if config.dynamic_uri == Some(false) {
        camel_language::constant(&template)
    } else {
        cx.uri_template(&template, false, "/uri")?
    };
    if !config.ignore_invalid_endpoint {
        check_fixed_uri(cx, &template, "/uri")?;
    }
    let on_prepare = match &config.on_prepare {
        None => None,
        Some(OnPrepare::Steps(steps)) => Some(cx.compile_steps(steps, "/on_prepare")?),
        Some(OnPrepare::Ref(name)) => Some(cx.processor(name).ok_or_else(|| {
            cx.error_at(
                "/on_prepare",
                RouteErrorKind::InvalidValue(format!("no processor is registered under `{name}`")),
            )
        })?),
    };
    let options = WireTapOptions {
        copy: config.copy.unwrap_or(true),
        queue_size: config.queue_size.unwrap_or(DEFAULT_TAP_QUEUE),
        concurrency: config.concurrency.unwrap_or(DEFAULT_TAP_CONCURRENCY),
        ignore_invalid_endpoint: config.ignore_invalid_endpoint,
        route_id: cx.route_id().to_string(),
        step: cx.path().to_string(),
    };
    let cache = producers(cx, CacheSize::from_option(config.cache_size));
    let tap = Tap::new(uri, cache, on_prepare, options);
    cx.add_lifecycle(tap.lifecycle());
    Ok(tap.into_processor())
}

pub(super) fn enrich(config: Enrich, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let uri = cx.uri_expression_in(&config, "")?;
    let strategy = strategy(
        cx,
        config.aggregation_strategy.as_deref(),
        "/aggregation_strategy",
    )?;
    let cache = producers(cx, CacheSize::from_option(config.cache_size));
    Ok(Enricher::enrich(uri, cache, strategy)
        .aggregate_on_exception(config.aggregate_on_exception)
        .ignore_invalid_endpoint(config.ignore_invalid_endpoint)
        .into_processor())
}

pub(super) fn poll_enrich(
    config: PollEnrich,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let uri = cx.uri_expression_in(&config, "")?;
    let strategy = strategy(
        cx,
        config.aggregation_strategy.as_deref(),
        "/aggregation_strategy",
    )?;
    let cache = pollers(cx, CacheSize::from_option(config.cache_size));
    Ok(Enricher::poll_enrich(uri, cache, config.wait(), strategy)
        .aggregate_on_exception(config.aggregate_on_exception)
        .ignore_invalid_endpoint(config.ignore_invalid_endpoint)
        .into_processor())
}

pub(super) fn claim_check(
    config: ClaimCheck,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    use ClaimCheckOperation::{Get, GetAndRemove, Set};
    let key = match (&config.key, config.operation) {
        (Some(key), _) => Some(cx.expression_text("simple", key, "/key")?),
        (None, Set | Get | GetAndRemove) => {
            return Err(cx.error(RouteErrorKind::Missing(format!(
                "`key` (operation {:?} needs one; Push and Pop do not)",
                config.operation
            ))))
        }
        (None, _) => None,
    };
    let filter = match &config.filter {
        None => MergeFilter::default(),
        Some(text) => MergeFilter::parse(text)
            .map_err(|m| cx.error_at("/filter", RouteErrorKind::InvalidValue(m)))?,
    };
    let store = cx
        .registry
        .resource_or_insert_with(CLAIM_CHECK_STORE, || Arc::new(ClaimCheckStore::default()))
        .downcast::<ClaimCheckStore>()
        .map_err(|_| {
            cx.error(RouteErrorKind::InvalidValue(format!(
                "the context resource `{CLAIM_CHECK_STORE}` is not a claim check store"
            )))
        })?;
    Ok(ClaimCheckStep::new(config.operation, key, filter, store).into_processor())
}
