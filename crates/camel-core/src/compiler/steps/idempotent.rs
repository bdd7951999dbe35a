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
    super::aggregate::repository::<SharedIdempotentRepository>(
        name,
        "idempotent repository",
        AT,
        cx,
        |factory, url| factory.idempotent(url, logical),
    )
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
