//! Shared by the redelivery tests: a counting step, a step that fails a number of times,
//! and a started context holding both as the beans `first` and `flaky`.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};

/// A step counting its calls.
pub(crate) fn counter() -> (Arc<BoxProcessor>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let p = BoxProcessor::sync(move |ex: Exchange| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(ex)
    });
    (Arc::new(p), calls)
}

/// A step failing the first `fails` times it sees an exchange `chosen` picks; counts all
/// its calls.
pub(crate) fn flaky(
    fails: usize,
    chosen: fn(&Exchange) -> bool,
) -> (Arc<BoxProcessor>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let p = BoxProcessor::sync(move |ex: Exchange| {
        seen.fetch_add(1, Ordering::SeqCst);
        if chosen(&ex) && failures.fetch_add(1, Ordering::SeqCst) < fails {
            Err(CamelError::processor("not yet"))
        } else {
            Ok(ex)
        }
    });
    (Arc::new(p), calls)
}

/// A started context with a mock component and the beans `first` (a counter) and `flaky`.
pub(crate) struct Run {
    pub(crate) ctx: CamelContext,
    pub(crate) mock: MockComponent,
    pub(crate) first: Arc<AtomicUsize>,
    pub(crate) failing: Arc<AtomicUsize>,
}

pub(crate) async fn run(
    routes: Vec<RouteDefinition>,
    fails: usize,
    chosen: fn(&Exchange) -> bool,
) -> Run {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    let (count, first) = counter();
    let (fail, failing) = flaky(fails, chosen);
    ctx.add_resource("first", count);
    ctx.add_resource("flaky", fail);
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    Run {
        ctx,
        mock,
        first,
        failing,
    }
}

pub(crate) fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}
