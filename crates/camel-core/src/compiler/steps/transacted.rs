//! `transacted: {datasource: URL, steps: [...]}`: the nested steps share one database
//! transaction (see `camel_eip::transacted`).

use camel_api::BoxProcessor;
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

pub(super) fn transacted(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut map = cx.object(config)?;
    let steps = map.remove("steps").unwrap_or(Json::Null);
    let datasource = match map.remove("datasource") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) if !s.trim().is_empty() => Some(s),
        Some(_) => {
            return Err(cx.error_at(
                "/datasource",
                RouteErrorKind::InvalidValue("`datasource` takes a database URL".into()),
            ))
        }
    };
    cx.no_more_keys(&map, &["datasource", "steps"])?;
    let relative = if datasource.is_some() {
        "/datasource"
    } else {
        ""
    };
    let manager = cx.transaction_manager(datasource.as_deref(), relative)?;
    let steps = cx.compile_steps(&steps, "/steps")?;
    Ok(camel_eip::transacted::transacted(manager, steps))
}
