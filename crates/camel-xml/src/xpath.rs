//! The `xpath` language: XPath 3.1 over the XML of the body (or of a header, property or
//! variable), compiled when the route loads.
//!
//! Results, as Camel's default (a node list) reads when converted: an empty result is
//! null; one atomic value keeps its type (text, integer, boolean, double); one element
//! or document is its XML; an attribute or text node is its text; several items are
//! joined. `result_type` asks for one kind instead: `String` (the XPath string value),
//! `Boolean`, `Integer` or `Long`, `Double`. As a predicate, the XPath effective boolean
//! value decides (`/order[@vip = 'true']`, `count(//item) > 2`).
//!
//! Options: `result_type`, `source` (`header:NAME`, `exchangeProperty:NAME`,
//! `variable:NAME`; also Camel's older `header_name`), and `namespace` (a list of
//! `{key: prefix, value: uri}`, or a map of prefixes to URIs).
//!
//! A compiled xee program is not `Send`, so each worker thread keeps its own compiled
//! copy of each expression (compiled again on first use there, at most
//! `PER_THREAD_QUERIES` of them); the route's load compiles it once to report errors.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use camel_api::{
    BoxExpression, BoxPredicate, CamelError, Exchange, Expression, ExpressionError, Language,
    Predicate, Value,
};
use serde_json::{Map, Value as Json};
use xee_xpath::context::StaticContextBuilder;
use xee_xpath::query::SequenceQuery;
use xee_xpath::{Atomic, Documents, Item, Queries, Query, Sequence};

use crate::document::{self, Source};

/// Compiled expressions one thread keeps; past it the cache starts over.
const PER_THREAD_QUERIES: usize = 256;

/// The `xpath` language for a context's language registry.
#[derive(Clone, Copy, Debug, Default)]
pub struct XPathLanguage;

/// What an expression's result is turned into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResultType {
    /// As Camel's node list reads (see the module docs).
    Auto,
    Text,
    Boolean,
    Integer,
    Double,
}

/// One compiled `xpath` expression.
#[derive(Debug)]
struct XPath {
    /// Identifies the expression in each thread's cache.
    id: u64,
    text: Arc<str>,
    namespaces: Arc<Vec<(String, String)>>,
    source: Source,
    result: ResultType,
}

impl Language for XPathLanguage {
    fn name(&self) -> &'static str {
        "xpath"
    }

    fn expression(
        &self,
        text: &str,
        options: &Map<String, Json>,
    ) -> Result<BoxExpression, ExpressionError> {
        Ok(Arc::new(XPath::compile(text, options)?))
    }

    fn predicate(
        &self,
        text: &str,
        options: &Map<String, Json>,
    ) -> Result<BoxPredicate, ExpressionError> {
        Ok(Arc::new(XPath::compile(text, options)?))
    }
}

fn problem(text: &str, message: impl Into<String>) -> ExpressionError {
    ExpressionError {
        language: "xpath".into(),
        expression: text.into(),
        column: 1,
        message: message.into(),
    }
}

impl XPath {
    fn compile(text: &str, options: &Map<String, Json>) -> Result<XPath, ExpressionError> {
        let mut result = ResultType::Auto;
        let mut source = Source::Body;
        let mut namespaces = Vec::new();
        for (key, value) in options {
            // Options come as written in the route (`resultType`) or in snake_case.
            match camel_api::suggest::to_snake_case(key).as_str() {
                "result_type" => result = result_type(text, value)?,
                "source" => source = source_of(text, value)?,
                "header_name" => source = Source::Header(json_text(value)),
                "namespace" | "namespaces" => namespaces = namespaces_of(text, value)?,
                // Camel's JVM choices (Saxon, factories, thread safety, logging): no effect.
                "saxon" | "factory_ref" | "object_model" | "log_namespaces" | "thread_safety"
                | "pre_compile" | "document_type" | "trim" => {}
                other => {
                    return Err(problem(
                        text,
                        format!("unknown option `{other}` (known: result_type, source, namespace)"),
                    ))
                }
            }
        }
        let xpath = XPath {
            id: next_id(),
            text: text.into(),
            namespaces: Arc::new(namespaces),
            source,
            result,
        };
        xpath.query().map_err(|e| problem(text, e))?;
        Ok(xpath)
    }

    /// This thread's compiled copy.
    fn query(&self) -> Result<SequenceQuery, String> {
        thread_local! {
            static QUERIES: RefCell<HashMap<u64, SequenceQuery>> = RefCell::new(HashMap::new());
        }
        if let Some(query) = QUERIES.with(|q| q.borrow().get(&self.id).cloned()) {
            return Ok(query);
        }
        let mut builder = StaticContextBuilder::default();
        for (prefix, uri) in self.namespaces.iter() {
            builder.add_namespace(prefix, uri);
        }
        let queries = Queries::new(builder);
        let query = guarded(|| queries.sequence(&self.text).map_err(|e| e.to_string()))?;
        QUERIES.with(|q| {
            let mut q = q.borrow_mut();
            if q.len() >= PER_THREAD_QUERIES {
                q.clear();
            }
            q.insert(self.id, query.clone());
        });
        Ok(query)
    }

    /// Evaluates on the exchange's XML; `f` reads the resulting sequence.
    fn run<T>(
        &self,
        exchange: &Exchange,
        f: impl FnOnce(&Sequence, &Documents) -> Result<T, String>,
    ) -> Result<T, CamelError> {
        let xml = self.source.text(exchange)?;
        let query = self.query().map_err(|e| self.failed(e))?;
        camel_api::blocking::in_place(|| {
            let mut documents = Documents::new();
            let handle = document::parse(&mut documents, &xml)?;
            let sequence = guarded(|| {
                query
                    .execute(&mut documents, handle)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| self.failed(e))?;
            f(&sequence, &documents).map_err(|e| self.failed(e))
        })
    }

    fn failed(&self, message: String) -> CamelError {
        CamelError::Expression(problem(&self.text, message))
    }
}

impl Expression for XPath {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let result = self.result;
        self.run(exchange, |sequence, documents| {
            value(sequence, documents, result)
        })
    }
}

impl Predicate for XPath {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        self.run(exchange, |sequence, _| {
            sequence
                .effective_boolean_value()
                .map_err(|e| e.to_string())
        })
    }
}

/// The route-facing value of a result.
fn value(sequence: &Sequence, documents: &Documents, result: ResultType) -> Result<Value, String> {
    let xot = documents.xot();
    let text = || sequence.string_value(xot).map_err(|e| e.to_string());
    match result {
        ResultType::Boolean => sequence
            .effective_boolean_value()
            .map(Value::Bool)
            .map_err(|e| e.to_string()),
        ResultType::Text => {
            // XPath's string(): of the first item only, as Camel's STRING result.
            match sequence.iter().next() {
                None => Ok(Value::Text("".into())),
                Some(item) => item
                    .string_value(xot)
                    .map(|s| Value::Text(s.into()))
                    .map_err(|e| e.to_string()),
            }
        }
        ResultType::Integer => {
            let t = text()?;
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && n.fract() == 0.0)
                .map(|n| Value::Int(n as i64))
                .ok_or_else(|| format!("`{t}` is not an integer"))
        }
        ResultType::Double => {
            let t = text()?;
            t.trim()
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| format!("`{t}` is not a number"))
        }
        ResultType::Auto => {
            let items: Vec<Item> = sequence.iter().collect();
            match items.as_slice() {
                [] => Ok(Value::Null),
                [Item::Atomic(atomic)] => atomic_value(atomic, documents),
                _ => {
                    let mut out = String::new();
                    for item in &items {
                        out.push_str(&item_text(item, documents)?);
                    }
                    Ok(Value::Text(out.into()))
                }
            }
        }
    }
}

/// An element or document as its XML; any other item as its string value.
fn item_text(item: &Item, documents: &Documents) -> Result<String, String> {
    let xot = documents.xot();
    match item {
        Item::Node(node) if xot.is_element(*node) || xot.is_document(*node) => {
            xot.to_string(*node).map_err(|e| e.to_string())
        }
        other => other.string_value(xot).map_err(|e| e.to_string()),
    }
}

fn atomic_value(atomic: &Atomic, documents: &Documents) -> Result<Value, String> {
    Ok(match atomic {
        Atomic::Boolean(b) => Value::Bool(*b),
        Atomic::Integer(_, n) => match i64::try_from(n.as_ref()) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::Text(n.to_string().into()),
        },
        Atomic::Double(d) => Value::Float(d.0),
        Atomic::Float(f) => Value::Float(f64::from(f.0)),
        other => Value::Text(
            Item::Atomic(other.clone())
                .string_value(documents.xot())
                .map_err(|e| e.to_string())?
                .into(),
        ),
    })
}

/// Runs xee code, turning a panic inside it into an error: a message must not take the
/// worker down through a bug of the library.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("the XPath engine failed on this input".to_string()))
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn json_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn result_type(text: &str, value: &Json) -> Result<ResultType, ExpressionError> {
    let name = json_text(value);
    let short = name
        .rsplit('.')
        .next()
        .unwrap_or(&name)
        .to_ascii_lowercase();
    Ok(match short.as_str() {
        "string" => ResultType::Text,
        "boolean" => ResultType::Boolean,
        "integer" | "int" | "long" | "short" => ResultType::Integer,
        "double" | "float" | "number" | "bigdecimal" => ResultType::Double,
        "nodelist" | "node" | "document" | "element" | "object" => ResultType::Auto,
        _ => {
            return Err(problem(
                text,
                format!(
                    "result_type `{name}`: use String, Boolean, Integer, Long, Double or NodeList"
                ),
            ))
        }
    })
}

fn source_of(text: &str, value: &Json) -> Result<Source, ExpressionError> {
    let spec = json_text(value);
    let (kind, name) = spec.split_once(':').unwrap_or(("header", spec.as_str()));
    let name = name.to_string();
    match kind {
        "header" => Ok(Source::Header(name)),
        "exchangeProperty" | "property" => Ok(Source::Property(name)),
        "variable" => Ok(Source::Variable(name)),
        "body" => Ok(Source::Body),
        other => Err(problem(
            text,
            format!("source `{other}:…`: use header:NAME, exchangeProperty:NAME or variable:NAME"),
        )),
    }
}

fn namespaces_of(text: &str, value: &Json) -> Result<Vec<(String, String)>, ExpressionError> {
    let bad = || {
        problem(
            text,
            "namespace: a list of {key: prefix, value: uri}, or a map of prefixes to URIs",
        )
    };
    match value {
        Json::Object(map) => Ok(map.iter().map(|(k, v)| (k.clone(), json_text(v))).collect()),
        Json::Array(list) => list
            .iter()
            .map(|entry| {
                let key = entry.get("key").and_then(Json::as_str).ok_or_else(bad)?;
                let uri = entry.get("value").and_then(Json::as_str).ok_or_else(bad)?;
                Ok((key.to_string(), uri.to_string()))
            })
            .collect(),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests;
