//! `bean`: a method of a bean registered in Rust (ADR 0076).

use std::sync::Arc;

use camel_api::{Bean, BoxProcessor};

use crate::bean::{build_bean, method_of, missing_bean};
use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{bean_name, camel_dsl, BeanStep};

/// `bean: {ref: name, method: m}` or `bean: {bean_type: t, method: m}`.
pub(super) fn bean(config: BeanStep, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    if config
        .scope
        .as_deref()
        .is_some_and(|s| !s.eq_ignore_ascii_case("singleton"))
    {
        camel_dsl::warn_ignored("bean", &["scope".to_string()]);
    }
    let invalid = |at: &str, why: String| cx.error_at(at, RouteErrorKind::InvalidValue(why));
    let (name, bean): (String, Arc<dyn Bean>) = match (&config.reference, &config.bean_type) {
        (Some(reference), _) => {
            let name = bean_name(reference).to_string();
            let found = cx
                .route
                .processors
                .get(&name)
                .cloned()
                .map(|p| Arc::new(p) as Arc<dyn Bean>)
                .or_else(|| cx.registry.bean(&name));
            match found {
                Some(bean) => (name, bean),
                // Its own error says why; the load adds no route, so this never runs.
                None if crate::bean::was_refused(cx.registry, &name) => {
                    return Ok(crate::bean::refused_stand_in(&name));
                }
                None => {
                    return Err(invalid(
                        "/ref",
                        missing_bean(&name, &cx.registry.bean_names()),
                    ))
                }
            }
        }
        (None, Some(bean_type)) => {
            let bean = build_bean(cx.registry, bean_type, bean_type, &Default::default())
                .map_err(|why| invalid("/bean_type", why))?;
            (bean_type.clone(), bean)
        }
        (None, None) => {
            return Err(cx.error(RouteErrorKind::InvalidValue(
                "`bean` needs `ref` (the name of a registered bean) or `bean_type`".into(),
            )))
        }
    };
    method_of(bean.as_ref(), &name, config.method.as_deref()).map_err(|why| invalid("/method", why))
}
