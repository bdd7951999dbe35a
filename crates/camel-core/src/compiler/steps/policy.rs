//! `policy: {ref: name, steps: [...]}`: Camel's Policy EIP. The steps are wrapped by the
//! policy registered in the context under `name` (`CamelContext::add_policy`), looked up
//! when the route is compiled.

use camel_api::suggest::nearest;
use camel_api::BoxProcessor;
use camel_eip::config::Policy;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{bean_name, looks_like_java_class};

/// Camel's name for the transaction policy `transacted` looks up by default; without a
/// policy registered under it, the steps share one transaction, as in `transacted`.
const PROPAGATION_REQUIRED: &str = "PROPAGATION_REQUIRED";

/// The resource holding the URL of the database `sql:` endpoints use when they name none
/// (`camel_sql::DATASOURCE_RESOURCE`, set from `spring.datasource.*` by the binary).
const SQL_DATASOURCE: &str = "sql.datasource";

pub(super) fn policy(config: Policy, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let written = config.reference.trim();
    let name = bean_name(written);
    if name.is_empty() {
        return Err(cx.error_at(
            "/ref",
            RouteErrorKind::Missing("`ref`: the name of a registered policy".into()),
        ));
    }
    if let Some(policy) = cx.registry.policy(name) {
        let inner = cx.compile_steps(&config.steps, "/steps")?;
        return Ok(policy.wrap(inner));
    }
    // A bean the file declared and that was refused (a Java class) already has its error;
    // a second one here would only repeat it. The route never runs: the load fails.
    if crate::bean::was_refused(cx.registry, name) {
        cx.compile_steps(&config.steps, "/steps")?;
        return Ok(crate::bean::refused_stand_in(name));
    }
    if name == PROPAGATION_REQUIRED {
        // The database `sql:` steps use when they name none, so that they join it.
        let datasource = cx
            .registry
            .resource(SQL_DATASOURCE)
            .and_then(|r| r.downcast::<String>().ok());
        let manager = cx.transaction_manager(datasource.as_deref().map(String::as_str), "/ref")?;
        let inner = cx.compile_steps(&config.steps, "/steps")?;
        return Ok(camel_eip::transacted::transacted(manager, inner));
    }
    if let Some(other) = name.strip_prefix("PROPAGATION_") {
        return Err(cx.error_at(
            "/ref",
            RouteErrorKind::InvalidValue(format!(
                "the transaction policy `PROPAGATION_{other}` is not supported yet: camel-rs \
                 has `PROPAGATION_REQUIRED` (the steps share one transaction, as in \
                 `transacted`); register a policy under `{name}` with `CamelContext::add_policy` \
                 to give it a meaning"
            )),
        ));
    }
    let message = if cx.registry.resource(name).is_some() {
        format!(
            "`{name}` is registered, but not as a policy (a policy is a Rust tower layer added \
             with `CamelContext::add_policy`)"
        )
    } else if looks_like_java_class(written) {
        format!(
            "`{written}` is a Java class, which cannot run here: a policy is a Rust tower layer \
             registered with `CamelContext::add_policy(\"name\", layer)` and named by `ref: name`"
        )
    } else {
        let known = cx.registry.policy_names();
        let hint = nearest(name, known.iter().map(String::as_str))
            .map(|n| format!(", did you mean `{n}`?"))
            .unwrap_or_default();
        let listed = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        format!(
            "no policy is registered under `{name}`{hint} (registered: {listed}; a policy is a \
             Rust tower layer added with `CamelContext::add_policy`; `{PROPAGATION_REQUIRED}` \
             is built in)"
        )
    };
    Err(cx.error_at("/ref", RouteErrorKind::InvalidValue(message)))
}
