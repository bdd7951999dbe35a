//! Steps that change the message: set a header, a property or the body, remove headers.

use std::sync::Arc;

use camel_api::{Body, BoxExpression, BoxProcessor, Exchange};

/// `set_header`: evaluates `expression` and stores it under `name`.
pub fn set_header(name: &str, expression: BoxExpression) -> BoxProcessor {
    let name: Arc<str> = name.into();
    BoxProcessor::sync(move |mut ex: Exchange| {
        let value = expression.evaluate(&ex)?;
        ex.message.headers.insert(name.clone(), value);
        Ok(ex)
    })
    .named("set_header")
}

/// `set_property`: evaluates `expression` and stores it as exchange property `name`.
pub fn set_property(name: &str, expression: BoxExpression) -> BoxProcessor {
    let name: Arc<str> = name.into();
    BoxProcessor::sync(move |mut ex: Exchange| {
        let value = expression.evaluate(&ex)?;
        ex.properties.insert(name.clone(), value);
        Ok(ex)
    })
    .named("set_property")
}

/// `set_body` and `transform`: evaluates `expression` and makes it the body.
pub fn set_body(expression: BoxExpression) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        let value = expression.evaluate(&ex)?;
        ex.message.body = Body::from(value);
        Ok(ex)
    })
    .named("set_body")
}

/// `remove_header`: removes the header `name`.
pub fn remove_header(name: &str) -> BoxProcessor {
    let name = name.to_string();
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.headers.remove(&name);
        Ok(ex)
    })
    .named("remove_header")
}

/// `remove_headers`: removes every header matching `pattern` (`*` wildcards).
pub fn remove_headers(pattern: &str) -> BoxProcessor {
    let pattern = pattern.to_string();
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.headers.remove_matching(&pattern);
        Ok(ex)
    })
    .named("remove_headers")
}

/// `remove_property`: removes the exchange property `name`.
pub fn remove_property(name: &str) -> BoxProcessor {
    let name = name.to_string();
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.properties.remove(&name);
        Ok(ex)
    })
    .named("remove_property")
}

/// `stop`: marks the exchange stopped; no later step runs.
pub fn stop() -> BoxProcessor {
    BoxProcessor::sync(|mut ex: Exchange| {
        ex.stop();
        Ok(ex)
    })
    .named("stop")
}
