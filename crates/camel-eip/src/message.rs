//! Steps that change the message: set a header, a property or the body, remove headers.
//!
//! Each works on the exchange in place, so a pipeline runs a sequence of them without
//! moving the exchange from step to step.

use camel_api::{Body, BoxExpression, BoxProcessor, Exchange, StripedName};

/// `set_header`: evaluates `expression` and stores it under `name`.
pub fn set_header(name: &str, expression: BoxExpression) -> BoxProcessor {
    let name = StripedName::new(name);
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let value = expression.evaluate(ex)?;
        ex.message.headers.set(name.get(), value);
        Ok(())
    })
    .named("set_header")
}

/// `set_headers`: evaluates each expression in order and stores it as its header, so a
/// later expression sees the headers set before it.
pub fn set_headers(headers: Vec<(String, BoxExpression)>) -> BoxProcessor {
    let headers: Vec<(StripedName, BoxExpression)> = headers
        .into_iter()
        .map(|(name, e)| (StripedName::new(&name), e))
        .collect();
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        for (name, expression) in &headers {
            let value = expression.evaluate(ex)?;
            ex.message.headers.set(name.get(), value);
        }
        Ok(())
    })
    .named("set_headers")
}

/// `set_property`: evaluates `expression` and stores it as exchange property `name`.
pub fn set_property(name: &str, expression: BoxExpression) -> BoxProcessor {
    let name = StripedName::new(name);
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let value = expression.evaluate(ex)?;
        ex.properties.set(name.get(), value);
        Ok(())
    })
    .named("set_property")
}

/// `set_body` and `transform`: evaluates `expression` and makes it the body.
pub fn set_body(expression: BoxExpression) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let value = expression.evaluate(ex)?;
        ex.message.body = Body::from(value);
        Ok(())
    })
    .named("set_body")
}

/// `remove_header`: removes the header `name`.
pub fn remove_header(name: &str) -> BoxProcessor {
    let name = name.to_string();
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        ex.message.headers.remove(&name);
        Ok(())
    })
    .named("remove_header")
}

/// `remove_headers`: removes every header matching `pattern` (`*` wildcards).
pub fn remove_headers(pattern: &str) -> BoxProcessor {
    let pattern = pattern.to_string();
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        ex.message.headers.remove_matching(&pattern);
        Ok(())
    })
    .named("remove_headers")
}

/// `remove_property`: removes the exchange property `name`.
pub fn remove_property(name: &str) -> BoxProcessor {
    let name = name.to_string();
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        ex.properties.remove(&name);
        Ok(())
    })
    .named("remove_property")
}

/// `stop`: marks the exchange stopped; no later step runs.
pub fn stop() -> BoxProcessor {
    BoxProcessor::sync_in_place(|ex: &mut Exchange| {
        ex.stop();
        Ok(())
    })
    .named("stop")
}
