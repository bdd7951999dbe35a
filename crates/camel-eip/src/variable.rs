//! `set_variable`, `remove_variable` and `convert_variable_to`: Camel's variables, in
//! the exchange scope or the process-wide `global:` scope ([`camel_api::variables`]).

use camel_api::variables::Variable;
use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange, Value};

/// `set_variable`: evaluates `expression` and stores it as variable `variable`.
pub fn set_variable(variable: Variable, expression: BoxExpression) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let value = expression.evaluate(ex)?;
        variable.set(ex, Some(value));
        Ok(())
    })
    .named("set_variable")
}

/// `set_variables`: sets each variable in order (a later expression sees the earlier
/// variables, as in Camel).
pub fn set_variables(steps: Vec<(Variable, BoxExpression)>) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        for (variable, expression) in &steps {
            let value = expression.evaluate(ex)?;
            variable.set(ex, Some(value));
        }
        Ok(())
    })
    .named("set_variables")
}

/// `remove_variable`: removes variable `variable` (nothing happens when it is absent).
pub fn remove_variable(variable: Variable) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        variable.set(ex, None);
        Ok(())
    })
    .named("remove_variable")
}

/// Target types of `convert_variable_to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// `String`.
    Text,
    /// `Integer`, `Long`.
    Integer,
    /// `Double`, `Float`.
    Decimal,
    /// `Boolean`.
    Boolean,
}

impl ValueType {
    /// Parses a type name; Camel's Java names (`java.lang.Integer`) are accepted.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        let short = name.rsplit('.').next().unwrap_or(name);
        Some(match short {
            "String" | "string" | "text" => ValueType::Text,
            "Integer" | "Long" | "int" | "long" | "integer" => ValueType::Integer,
            "Double" | "Float" | "double" | "float" | "decimal" => ValueType::Decimal,
            "Boolean" | "boolean" => ValueType::Boolean,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            ValueType::Text => "text",
            ValueType::Integer => "integer",
            ValueType::Decimal => "decimal",
            ValueType::Boolean => "boolean",
        }
    }

    /// Converts `value`; null stays null, like a missing variable in Camel.
    pub fn convert(self, value: &Value) -> Result<Value, CamelError> {
        if value.is_null() {
            return Ok(Value::Null);
        }
        let text = || value.to_string();
        let fail = |why: String| CamelError::conversion(self.name(), why);
        Ok(match self {
            ValueType::Text => match value {
                Value::Text(_) => value.clone(),
                Value::Bytes(b) => Value::Text(
                    std::str::from_utf8(b)
                        .map_err(|e| fail(e.to_string()))?
                        .into(),
                ),
                other => Value::Text(other.to_string().into()),
            },
            ValueType::Integer => match value {
                Value::Int(_) => value.clone(),
                other => Value::Int(
                    other
                        .as_i64()
                        .or_else(|| text().trim().parse().ok())
                        .ok_or_else(|| fail(format!("`{}` is not an integer", text())))?,
                ),
            },
            ValueType::Decimal => Value::Float(
                value
                    .as_f64()
                    .or_else(|| text().trim().parse().ok())
                    .ok_or_else(|| fail(format!("`{}` is not a number", text())))?,
            ),
            ValueType::Boolean => match value {
                Value::Bool(_) => value.clone(),
                other => match text().trim() {
                    t if t.eq_ignore_ascii_case("true") => Value::Bool(true),
                    t if t.eq_ignore_ascii_case("false") => Value::Bool(false),
                    _ => return Err(fail(format!("`{}` is not true or false", other))),
                },
            },
        })
    }
}

/// `convert_variable_to`: converts variable `variable` in place; an absent variable is
/// left absent.
pub fn convert_variable_to(variable: Variable, to: ValueType) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let converted = match variable.get(ex) {
            Some(value) => to.convert(&value)?,
            None => return Ok(()),
        };
        variable.set(ex, Some(converted));
        Ok(())
    })
    .named("convert_variable_to")
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::Expression;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Constant(Value);

    impl Expression for Constant {
        fn evaluate(&self, _: &Exchange) -> Result<Value, CamelError> {
            Ok(self.0.clone())
        }
    }

    fn var(name: &str) -> Variable {
        Variable::parse(name).unwrap_or_else(|e| panic!("{e}"))
    }

    fn constant(v: &str) -> BoxExpression {
        Arc::new(Constant(Value::Text(v.into())))
    }

    async fn run(p: &BoxProcessor, ex: Exchange) -> Result<Exchange, CamelError> {
        p.process(ex).await
    }

    #[tokio::test]
    async fn sets_converts_and_removes_an_exchange_variable() -> Result<(), CamelError> {
        let ex = run(
            &set_variable(var("n"), constant(" 42 ")),
            Exchange::new("b"),
        )
        .await?;
        assert_eq!(ex.variable("n"), Some(&Value::Text(" 42 ".into())));
        // In-place path gives the same result as the moving one.
        let mut again = ex.clone();
        convert_variable_to(var("n"), ValueType::Integer)
            .process_in_place(&mut again)
            .unwrap_or(Ok(()))?;
        assert_eq!(again.variable("n"), Some(&Value::Int(42)));
        let ex = run(&remove_variable(var("n")), again).await?;
        assert_eq!(ex.variable("n"), None);
        assert_eq!(ex.message.headers.len(), 0, "variables are not headers");
        Ok(())
    }

    #[tokio::test]
    async fn a_bad_conversion_fails_the_exchange() {
        let ex = Exchange::new("b");
        let ex = run(&set_variable(var("n"), constant("abc")), ex).await;
        let ex = ex.unwrap_or_default();
        let failed = run(&convert_variable_to(var("n"), ValueType::Integer), ex).await;
        assert!(failed.is_err());
    }

    #[tokio::test]
    async fn global_variables_outlive_the_exchange() -> Result<(), CamelError> {
        let name = "global:eip_variable_test_counter";
        run(&set_variable(var(name), constant("7")), Exchange::new("a")).await?;
        let other = Exchange::new("b");
        assert_eq!(other.variable("eip_variable_test_counter"), None);
        assert_eq!(
            var(name).get(&other).map(|v| v.into_owned()),
            Some(Value::Text("7".into()))
        );
        run(&remove_variable(var(name)), other).await?;
        assert_eq!(
            camel_api::variables::global("eip_variable_test_counter"),
            None
        );
        Ok(())
    }

    #[tokio::test]
    async fn route_variables_are_kept_per_route_id() -> Result<(), CamelError> {
        let a = var("route:eip-a:count");
        run(&set_variable(a.clone(), constant("1")), Exchange::new("x")).await?;
        let other = Exchange::new("y");
        assert_eq!(
            a.get(&other).map(|v| v.into_owned()),
            Some(Value::from("1"))
        );
        assert_eq!(var("route:eip-b:count").get(&other), None);
        assert_eq!(var("global:count").get(&other), None);
        run(&remove_variable(a.clone()), other).await?;
        assert_eq!(camel_api::variables::route("eip-a", "count"), None);
        Ok(())
    }

    #[test]
    fn route_scope_without_an_id_is_refused_with_a_reason() {
        let err = Variable::parse("route:x").err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("route:ROUTE_ID:NAME")));
        assert!(Variable::parse("route::x").is_err());
        assert!(Variable::parse("route:r1:").is_err());
        assert!(Variable::parse("global:").is_err());
        assert_eq!(ValueType::parse("java.lang.Long"), Some(ValueType::Integer));
    }
}

/// Camel's `variable_send` and `variable_receive` of `to` and `to_d` (Camel 4.4): the
/// body sent is the value of `send` (the headers are the message's), and the body
/// received is stored in `receive`, the message staying as it was before the send
/// (headers included). Without `receive` the reply is the message, as with any send.
pub fn around_send(
    inner: BoxProcessor,
    send: Option<Variable>,
    receive: Option<Variable>,
) -> BoxProcessor {
    if send.is_none() && receive.is_none() {
        return inner;
    }
    BoxProcessor::new(AroundSend {
        inner,
        send,
        receive,
    })
    .named("to")
}

#[derive(Debug)]
struct AroundSend {
    inner: BoxProcessor,
    send: Option<Variable>,
    receive: Option<Variable>,
}

impl camel_api::Process for AroundSend {
    fn process(&self, mut ex: Exchange) -> camel_api::ProcessorFuture {
        let kept = self.receive.as_ref().map(|_| ex.message.clone());
        if let Some(send) = &self.send {
            let value = send.get(&ex).map(|v| v.into_owned());
            ex.message.body = value.map(camel_api::Body::from).unwrap_or_default();
        }
        let receive = self.receive.clone();
        let finish = move |r: Result<Exchange, CamelError>| {
            r.map(|mut out| {
                if let (Some(variable), Some(kept)) = (&receive, kept) {
                    let reply = std::mem::replace(&mut out.message, kept);
                    variable.set(&mut out, Some(reply.body.to_value()));
                }
                out
            })
        };
        match self.inner.process(ex) {
            camel_api::ProcessorFuture::Ready(Some(r)) => {
                camel_api::ProcessorFuture::ready(finish(r))
            }
            pending => camel_api::ProcessorFuture::boxed(async move { finish(pending.await) }),
        }
    }
}

/// Camel's `variable_receive` of `from`: the body the consumer received moves into the
/// variable, and the message goes on with an empty body.
pub fn receive_into(variable: Variable) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let body = std::mem::take(&mut ex.message.body);
        variable.set(ex, Some(body.to_value()));
        Ok(())
    })
    .named("variable_receive")
}
