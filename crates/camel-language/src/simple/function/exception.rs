//! `${exception}`, `${exception.message}`, `${exception.stacktrace}` (and
//! `${exception.kind}`): the error an error handler, `on_exception` or `do_catch` caught
//! (ADR 0052). As in Camel, they fall back to the caught error once a handler took it
//! off the exchange: here the `CamelExceptionCaught` property, which holds its message.

use camel_api::{error_kind, Exchange, Value};

use crate::problem::Problem;

/// Which part of the caught error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// `${exception}`: kind and message, as the error prints.
    Whole,
    /// `${exception.message}`.
    Message,
    /// `${exception.stacktrace}`: the error chain, one cause per line.
    Stacktrace,
    /// `${exception.kind}` (ours): the kind name `on_exception` lists match.
    Kind,
}

/// Resolves `name` when it reads the caught error.
pub(crate) fn parse(name: &str, at: usize) -> Result<Option<Part>, Problem> {
    let Some(rest) = name.strip_prefix("exception") else {
        return Ok(None);
    };
    Ok(Some(match rest {
        "" => Part::Whole,
        ".message" | ".getMessage()" => Part::Message,
        ".stacktrace" | ".stackTrace" => Part::Stacktrace,
        ".kind" => Part::Kind,
        other if other.starts_with('.') => {
            return Err(Problem::new(
                at + "exception.".len(),
                format!(
                    "unknown part `{}` of the caught error (message, stacktrace, kind)",
                    &other[1..]
                ),
            ))
        }
        _ => return Ok(None),
    }))
}

impl Part {
    pub(crate) fn value(self, exchange: &Exchange) -> Value {
        if let Some(e) = exchange.caught_error() {
            return Value::Text(
                match self {
                    Part::Whole => e.to_string(),
                    Part::Message => e.message(),
                    Part::Stacktrace => error_kind::chain(e),
                    Part::Kind => e.kind_name().to_string(),
                }
                .into(),
            );
        }
        let caught = exchange.property(error_kind::EXCEPTION_CAUGHT);
        match (self, caught) {
            (_, None) => Value::Null,
            (Part::Kind, Some(_)) => exchange
                .property(error_kind::EXCEPTION_KIND)
                .cloned()
                .unwrap_or(Value::Null),
            (_, Some(v)) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use camel_api::CamelError;

    use super::*;

    #[test]
    fn reads_the_caught_error_then_the_property() {
        let mut ex = Exchange::default();
        assert_eq!(Part::Message.value(&ex), Value::Null);
        ex.set_caught_error(Some(Arc::new(CamelError::user(
            "java.lang.IllegalStateException",
            "late",
        ))));
        assert_eq!(Part::Message.value(&ex), Value::from("late"));
        assert_eq!(
            Part::Whole.value(&ex),
            Value::from("IllegalStateException: late")
        );
        assert_eq!(Part::Kind.value(&ex), Value::from("IllegalStateException"));
        assert!(Part::Stacktrace
            .value(&ex)
            .to_string()
            .starts_with("IllegalStateException"));
        let mut later = Exchange::default();
        later
            .properties
            .insert(error_kind::EXCEPTION_CAUGHT, "gone");
        assert_eq!(Part::Message.value(&later), Value::from("gone"));
        assert_eq!(parse("exception.nope", 2).unwrap_err().at, 12);
        assert_eq!(parse("exceptionally", 0).unwrap(), None);
    }
}
