//! The one reading of an `aggregation_strategy` option, shared by `aggregate`, `split`,
//! `recipient_list`, `enrich` and `poll_enrich`.
//!
//! Camel files write a strategy as a built-in name or Camel class
//! (`GroupedBodyAggregationStrategy`, `#class:org.apache.camel.processor.aggregate.…`), or
//! as a reference to a registered object (`myStrategy`, `#myStrategy`,
//! `#bean:myStrategy`). A reference finds a [`SharedStrategy`] registered as a context
//! resource; any other `#class:` names Java code, which cannot run here.

use camel_api::suggest::nearest;
use camel_eip::aggregation::{builtin, SharedStrategy, BUILTIN_NAMES};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{bean_name, looks_like_java_class};

/// The strategy `name` names, or the located reason it names none.
pub(crate) fn strategy(
    name: &str,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<SharedStrategy, RouteError> {
    let written = name.trim();
    let invalid = |why: String| cx.error_at(at, RouteErrorKind::InvalidValue(why));
    if written.is_empty() {
        return Err(cx.error_at(
            at,
            RouteErrorKind::Missing(format!(
                "an aggregation_strategy (one of {} or a registered strategy)",
                BUILTIN_NAMES.join(", ")
            )),
        ));
    }
    if let Some(s) = builtin(written) {
        return Ok(s);
    }
    let java = |class: &str| {
        invalid(format!(
            "`{class}` is a Java class, which cannot run here: register an \
             `Arc<dyn AggregationStrategy>` in the context under a name and write `#name`, or use \
             a built-in ({})",
            BUILTIN_NAMES.join(", ")
        ))
    };
    if let Some(class) = written.strip_prefix("#class:") {
        return Err(java(class.trim()));
    }
    let reference = bean_name(written);
    if let Some(resource) = cx.registry.resource(reference) {
        return resource
            .downcast::<SharedStrategy>()
            .map(|s| (*s).clone())
            .map_err(|_| {
                invalid(format!(
                    "`{reference}` is registered but is not an aggregation strategy (register an \
                     `Arc<dyn AggregationStrategy>` under that name)"
                ))
            });
    }
    // A bean of the file declared with one of Camel's strategy classes.
    if let Some(s) = cx
        .route
        .beans
        .iter()
        .find(|b| b.name == reference)
        .and_then(crate::bean::builtin_strategy)
    {
        return Ok(s);
    }
    if looks_like_java_class(written) {
        return Err(java(written));
    }
    let hint = nearest(written, BUILTIN_NAMES.iter().copied())
        .map(|s| format!(", did you mean `{s}`?"))
        .unwrap_or_default();
    Err(invalid(format!(
        "unknown aggregation strategy `{written}`{hint} (built-in: {}; or a strategy registered \
         in the context under that name, written `name`, `#name` or `#bean:name`)",
        BUILTIN_NAMES.join(", ")
    )))
}
