//! `idempotent_consumer`: runs `steps` once per message id.
//!
//! ```yaml
//! - idempotent_consumer:
//!     header: orderId
//!     message_id_repository: memory:5000    # or a resource name, postgres://…, sqlite:…
//!     steps:
//!       - to: log:first-time
//! ```

use std::sync::Arc;

use camel_api::BoxProcessor;
use camel_eip::config::IdempotentConsumer as Config;
use camel_eip::idempotent::{
    IdempotentConsumer, IdempotentOptions, MemoryIdempotentRepository, SharedIdempotentRepository,
};

use super::aggregate::{is_url, store_factory};
use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

const AT: &str = "/message_id_repository";

fn repository(
    name: Option<&str>,
    logical: &str,
    cx: &StepContext<'_>,
) -> Result<SharedIdempotentRepository, RouteError> {
    let Some(name) = name else {
        return Ok(Arc::new(MemoryIdempotentRepository::default()));
    };
    if let Some(bound) = name.strip_prefix("memory:") {
        let capacity = bound.trim().parse::<usize>().map_err(|_| {
            cx.error_at(
                AT,
                RouteErrorKind::InvalidValue(format!(
                    "`{name}`: the memory repository takes a bound, as in `memory:5000`"
                )),
            )
        })?;
        return Ok(Arc::new(MemoryIdempotentRepository::new(capacity)));
    }
    if name == "memory" {
        return Ok(Arc::new(MemoryIdempotentRepository::default()));
    }
    let reference = name.strip_prefix('#').unwrap_or(name);
    if let Some(resource) = cx.registry.resource(reference) {
        return resource
            .downcast::<SharedIdempotentRepository>()
            .map(|r| (*r).clone())
            .map_err(|_| {
                cx.error_at(
                    AT,
                    RouteErrorKind::InvalidValue(format!(
                        "the resource `{reference}` is not an idempotent repository"
                    )),
                )
            });
    }
    if !is_url(name) {
        return Err(cx.error_at(
            AT,
            RouteErrorKind::InvalidValue(format!(
                "no idempotent repository is registered under `{name}` (name a context resource, or write memory:N, postgres://… or sqlite:…)"
            )),
        ));
    }
    store_factory(name, AT, cx)?
        .idempotent(name, logical)
        .map_err(|e| cx.error_at(AT, RouteErrorKind::Endpoint(e)))
}

pub(super) fn idempotent_consumer(
    config: Config,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let id = cx.expression_in(&config, "")?;
    let logical = format!(
        "{}/{}",
        cx.route_id(),
        config.id.as_deref().unwrap_or(cx.path())
    );
    let repository = repository(config.message_id_repository.as_deref(), &logical, cx)?;
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    Ok(
        IdempotentConsumer::new(id, repository, steps, IdempotentOptions::from(&config))
            .into_processor(),
    )
}
