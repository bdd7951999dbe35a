//! `set_exchange_pattern`, a `to` with its own `pattern`, and `convert_header_to`.

use camel_api::{
    BoxProcessor, CamelError, Exchange, ExchangePattern, Process, ProcessorFuture, Value,
};

use crate::variable::ValueType;

/// `set_exchange_pattern`: sets the exchange's pattern for the rest of the route.
pub fn set_exchange_pattern(pattern: ExchangePattern) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        ex.pattern = pattern;
        Ok(())
    })
    .named("set_exchange_pattern")
}

/// `to: {uri, pattern}`: sends with `pattern` and restores the exchange's own pattern
/// afterwards, as Camel does.
pub fn send_with_pattern(producer: BoxProcessor, pattern: ExchangePattern) -> BoxProcessor {
    BoxProcessor::new(WithPattern { producer, pattern }).named("to")
}

#[derive(Debug)]
struct WithPattern {
    producer: BoxProcessor,
    pattern: ExchangePattern,
}

impl Process for WithPattern {
    fn process(&self, mut ex: Exchange) -> ProcessorFuture {
        let own = std::mem::replace(&mut ex.pattern, self.pattern);
        let restore = move |r: Result<Exchange, CamelError>| {
            r.map(|mut ex| {
                ex.pattern = own;
                ex
            })
        };
        match self.producer.process(ex) {
            ProcessorFuture::Ready(Some(r)) => ProcessorFuture::ready(restore(r)),
            pending => ProcessorFuture::boxed(async move { restore(pending.await) }),
        }
    }
}

/// What `convert_header_to` converts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderType {
    /// A scalar type ([`ValueType`]).
    Value(ValueType),
    /// Bytes (`byte[]`).
    Bytes,
}

impl HeaderType {
    /// Parses a type name; Camel's Java names are accepted.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "byte[]" | "[B" | "bytes" | "Bytes" => Some(HeaderType::Bytes),
            other => ValueType::parse(other).map(HeaderType::Value),
        }
    }
}

pub use crate::convert::Charset;

fn bytes_value(bytes: Vec<u8>) -> Value {
    Value::Bytes(bytes.into())
}

/// The options of `convert_header_to`.
#[derive(Clone, Debug)]
pub struct ConvertHeader {
    /// The header to read.
    pub name: String,
    /// The header to write (`name` when `None`).
    pub to_name: Option<String>,
    /// The type to convert to.
    pub to: HeaderType,
    /// A failed conversion fails the exchange (true) or removes the header (false).
    pub mandatory: bool,
    /// How bytes and text convert.
    pub charset: Charset,
}

impl ConvertHeader {
    fn convert(&self, value: &Value) -> Result<Value, CamelError> {
        match (self.to, value) {
            (HeaderType::Bytes, Value::Bytes(_)) => Ok(value.clone()),
            (HeaderType::Bytes, Value::Text(t)) => self.charset.encode(t).map(bytes_value),
            (HeaderType::Bytes, other) => self.charset.encode(&other.to_string()).map(bytes_value),
            (HeaderType::Value(to), Value::Bytes(b)) => {
                to.convert(&Value::Text(self.charset.decode(b)?.into()))
            }
            (HeaderType::Value(to), other) => to.convert(other),
        }
    }
}

/// `convert_header_to`: converts a header in place (or into `to_name`); a missing header
/// is left missing.
pub fn convert_header_to(options: ConvertHeader) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let Some(value) = ex.message.headers.get(&options.name).cloned() else {
            return Ok(());
        };
        let target = options.to_name.as_deref().unwrap_or(&options.name);
        match options.convert(&value) {
            Ok(v) => {
                ex.message.headers.insert(target, v);
            }
            Err(e) if options.mandatory => return Err(e),
            Err(_) => {
                ex.message.headers.remove(target);
            }
        }
        Ok(())
    })
    .named("convert_header_to")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(to: &str) -> ConvertHeader {
        ConvertHeader {
            name: "h".into(),
            to_name: None,
            to: HeaderType::parse(to).unwrap(),
            mandatory: true,
            charset: Charset::Utf8,
        }
    }

    async fn run(step: &BoxProcessor, value: impl Into<Value>) -> Result<Exchange, CamelError> {
        step.process(Exchange::new("x").with_header("h", value))
            .await
    }

    #[tokio::test]
    async fn converts_types_and_names() {
        let step = convert_header_to(options("java.lang.Integer"));
        let out = run(&step, "42").await.unwrap();
        assert_eq!(out.header("h"), Some(&Value::Int(42)));
        assert!(run(&step, "forty").await.is_err(), "mandatory by default");

        let lenient = convert_header_to(ConvertHeader {
            mandatory: false,
            ..options("Integer")
        });
        let out = run(&lenient, "forty").await.unwrap();
        assert_eq!(out.header("h"), None, "not mandatory: removed");

        let renamed = convert_header_to(ConvertHeader {
            to_name: Some("n".into()),
            ..options("Boolean")
        });
        let out = run(&renamed, "TRUE").await.unwrap();
        assert_eq!(out.header("n"), Some(&Value::Bool(true)));
        assert_eq!(out.header("h"), Some(&Value::from("TRUE")), "source kept");

        let missing = step.process(Exchange::new("x")).await.unwrap();
        assert_eq!(missing.header("h"), None);
    }

    #[tokio::test]
    async fn charsets_apply_between_bytes_and_text() {
        let latin = convert_header_to(ConvertHeader {
            charset: Charset::parse("iso-8859-1").unwrap(),
            ..options("String")
        });
        let out = run(&latin, Value::Bytes(vec![0x63, 0x61, 0x66, 0xe9].into()))
            .await
            .unwrap();
        assert_eq!(out.header("h"), Some(&Value::from("café")));
        let utf8 = convert_header_to(options("String"));
        assert!(run(&utf8, Value::Bytes(vec![0xe9].into())).await.is_err());
        let to_bytes = convert_header_to(ConvertHeader {
            charset: Charset::Latin1,
            ..options("byte[]")
        });
        let out = run(&to_bytes, "café").await.unwrap();
        assert_eq!(
            out.header("h"),
            Some(&Value::Bytes(vec![0x63, 0x61, 0x66, 0xe9].into()))
        );
        assert!(Charset::parse("EBCDIC").is_none());
    }

    #[tokio::test]
    async fn pattern_is_set_and_a_send_restores_it() {
        let set = set_exchange_pattern(ExchangePattern::InOut);
        let out = set.process(Exchange::new("x")).await.unwrap();
        assert_eq!(out.pattern, ExchangePattern::InOut);

        let seen = BoxProcessor::sync(|mut ex: Exchange| {
            ex.message
                .headers
                .insert("seen", format!("{:?}", ex.pattern));
            Ok(ex)
        });
        let send = send_with_pattern(seen, ExchangePattern::InOut);
        let out = send.process(Exchange::new("x")).await.unwrap();
        assert_eq!(out.header("seen"), Some(&Value::from("InOut")));
        assert_eq!(out.pattern, ExchangePattern::InOnly);
    }
}
