//! Aggregation strategies: how several exchanges become one. Shared by every EIP that
//! combines results (aggregate, split, multicast, recipient list, enrich), as in Camel.
//!
//! A strategy folds exchanges pairwise, Camel's `aggregate(oldExchange, newExchange)`:
//! the first call gets `None` as the running aggregate. When the group is complete,
//! [`AggregationStrategy::on_completion`] may reshape the result (and sees the exchange
//! that started the fan-out, where there is one).
//!
//! Built-ins are found by [`builtin`] under a short snake_case name, Camel's class name
//! (`GroupedBodyAggregationStrategy`, with or without `org.apache.camel.processor.aggregate.`
//! and a `#class:` prefix) or camelCase. A user strategy is registered as a context
//! resource of type [`SharedStrategy`] and named the same way
//! (`aggregation_strategy: myStrategy`).
//!
//! ```
//! use camel_api::{Body, Exchange};
//! use camel_eip::aggregation::{builtin, fold};
//!
//! let strategy = builtin("GroupedBodyAggregationStrategy").unwrap();
//! let parts = vec![Exchange::new("a"), Exchange::new("b")];
//! let out = fold(&*strategy, parts, None).unwrap().unwrap();
//! assert_eq!(out.message.body, Body::from(serde_json::json!(["a", "b"])));
//! ```

use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange, Message};

/// Combines exchanges pairwise into one.
pub trait AggregationStrategy: Send + Sync + 'static {
    /// Folds `new` into the running aggregate `old` (`None` on the first call) and returns
    /// the new aggregate. An error fails the aggregation (the EIP decides what that means
    /// for its exchanges).
    fn aggregate(&self, old: Option<Exchange>, new: Exchange) -> Result<Exchange, CamelError>;

    /// [`aggregate`](Self::aggregate) for a caller that keeps `new` (the aggregator passes
    /// its incoming exchange on unchanged). The default clones `new`; a strategy that only
    /// reads it (the grouped and string built-ins take its body) overrides this to save
    /// the copy. Must give the same result as `aggregate(old, new.clone())`.
    fn aggregate_borrowed(
        &self,
        old: Option<Exchange>,
        new: &Exchange,
    ) -> Result<Exchange, CamelError> {
        self.aggregate(old, new.clone())
    }

    /// Called once with the finished aggregate; `original` is the exchange that was split
    /// or multicast, where the EIP has one. The default keeps the aggregate.
    fn on_completion(&self, aggregated: Exchange, original: Option<&Exchange>) -> Exchange {
        let _ = original;
        aggregated
    }
}

/// A strategy shared by every exchange of a step (and registrable as a context resource).
pub type SharedStrategy = Arc<dyn AggregationStrategy>;

/// Folds `exchanges` in order with `strategy`, then completes with `original`. `None` when
/// there was nothing to fold.
pub fn fold(
    strategy: &dyn AggregationStrategy,
    exchanges: impl IntoIterator<Item = Exchange>,
    original: Option<&Exchange>,
) -> Result<Option<Exchange>, CamelError> {
    let mut acc = None;
    for ex in exchanges {
        acc = Some(strategy.aggregate(acc, ex)?);
    }
    Ok(acc.map(|a| strategy.on_completion(a, original)))
}

/// The built-in strategies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// The bodies as a JSON array (Camel's `GroupedBodyAggregationStrategy`).
    GroupedBody,
    /// Each message as `{"headers": {…}, "body": …}` in a JSON array. Camel's
    /// `GroupedExchangeAggregationStrategy` and `GroupedMessageAggregationStrategy` keep
    /// Java objects; here both give this array.
    GroupedMessage,
    /// The latest exchange wins (Camel's `UseLatestAggregationStrategy`).
    UseLatest,
    /// The exchange that started the fan-out is the result; without one, the first
    /// exchange (Camel's `UseOriginalAggregationStrategy`).
    UseOriginal,
    /// The bodies as text joined by `delimiter` (Camel's `StringAggregationStrategy`).
    String {
        /// Put between two bodies.
        delimiter: String,
    },
}

impl AggregationStrategy for Builtin {
    fn aggregate(&self, old: Option<Exchange>, new: Exchange) -> Result<Exchange, CamelError> {
        match self {
            Builtin::UseLatest => Ok(new),
            Builtin::UseOriginal => Ok(old.unwrap_or(new)),
            Builtin::GroupedBody | Builtin::GroupedMessage | Builtin::String { .. } => {
                Ok(match old {
                    None => self.first(new),
                    Some(acc) => self.fold_into(acc, &new.message),
                })
            }
        }
    }

    fn aggregate_borrowed(
        &self,
        old: Option<Exchange>,
        new: &Exchange,
    ) -> Result<Exchange, CamelError> {
        match (self, old) {
            (Builtin::UseLatest, _) | (_, None) => self.aggregate(None, new.clone()),
            (Builtin::UseOriginal, Some(acc)) => Ok(acc),
            (_, Some(acc)) => Ok(self.fold_into(acc, &new.message)),
        }
    }

    fn on_completion(&self, aggregated: Exchange, original: Option<&Exchange>) -> Exchange {
        match (self, original) {
            (Builtin::UseOriginal, Some(original)) => original.clone(),
            _ => aggregated,
        }
    }
}

impl Builtin {
    /// The aggregate of a group's first exchange (grouped and string strategies).
    fn first(&self, new: Exchange) -> Exchange {
        let body = match self {
            Builtin::GroupedBody => {
                Body::from(serde_json::Value::Array(vec![body_json(&new.message.body)]))
            }
            Builtin::GroupedMessage => {
                Body::from(serde_json::Value::Array(vec![message_json(&new.message)]))
            }
            Builtin::String { .. } => Body::from(body_text(&new.message.body)),
            Builtin::UseLatest | Builtin::UseOriginal => return new,
        };
        with_body(new, body)
    }

    /// Adds `new` to the running aggregate `acc` (grouped and string strategies).
    fn fold_into(&self, mut acc: Exchange, new: &Message) -> Exchange {
        match self {
            Builtin::GroupedBody => append(&mut acc.message.body, body_json(&new.body)),
            Builtin::GroupedMessage => append(&mut acc.message.body, message_json(new)),
            Builtin::String { delimiter } => {
                let mut joined = body_text(&acc.message.body);
                joined.push_str(delimiter);
                joined.push_str(&body_text(&new.body));
                acc.message.body = Body::from(joined);
            }
            Builtin::UseLatest | Builtin::UseOriginal => {}
        }
        acc
    }
}

/// The built-in strategy called `name`: a short name (`grouped_body`, `use_latest`,
/// `string`, the multicast spellings `collect_all`, `last_wins`, `original`), a Camel class
/// name with or without its package and `#class:` prefix, or camelCase.
///
/// Options follow a `?`, as in `StringAggregationStrategy?delimiter=,` (the delimiter of
/// the string strategy; our spelling for the bean property Camel sets in Java).
pub fn builtin(name: &str) -> Option<SharedStrategy> {
    let (name, options) = match name.trim().split_once('?') {
        Some((name, options)) => (name, Some(options)),
        None => (name.trim(), None),
    };
    let delimiter = match options {
        None => String::new(),
        Some(options) => {
            let mut delimiter = String::new();
            for pair in options.split('&') {
                match pair.split_once('=') {
                    Some(("delimiter", value)) => delimiter = camel_api::percent_decode(value),
                    _ => return None,
                }
            }
            delimiter
        }
    };
    let name = name.strip_prefix("#class:").unwrap_or(name);
    let name = name.rsplit('.').next().unwrap_or(name);
    let name = name.strip_suffix("AggregationStrategy").unwrap_or(name);
    let key: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    let strategy = match key.as_str() {
        "groupedbody" | "collectall" => Builtin::GroupedBody,
        "groupedexchange" | "groupedmessage" => Builtin::GroupedMessage,
        "uselatest" | "lastwins" | "latest" => Builtin::UseLatest,
        "useoriginal" | "original" => Builtin::UseOriginal,
        "string" => Builtin::String { delimiter },
        _ => return None,
    };
    if options.is_some() && !matches!(strategy, Builtin::String { .. }) {
        return None;
    }
    Some(Arc::new(strategy))
}

/// The names [`builtin`] knows, for "did you mean" suggestions and docs.
pub const BUILTIN_NAMES: &[&str] = &[
    "grouped_body",
    "grouped_exchange",
    "grouped_message",
    "use_latest",
    "use_original",
    "string",
];

/// Appends `value` to a JSON array body. The array is extended where it lies when the body
/// is its only owner (the aggregator's case), so a growing group is neither copied nor
/// re-allocated per exchange; any other body becomes the array's first item.
fn append(body: &mut Body, value: serde_json::Value) {
    if let Body::Json(j) = body {
        if let Some(serde_json::Value::Array(items)) = Arc::get_mut(j) {
            items.push(value);
            return;
        }
    }
    let mut items = match std::mem::take(body) {
        Body::Json(j) => match Arc::try_unwrap(j).unwrap_or_else(|j| (*j).clone()) {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        },
        other => vec![body_json(&other)],
    };
    items.push(value);
    *body = Body::from(serde_json::Value::Array(items));
}

fn with_body(mut ex: Exchange, body: Body) -> Exchange {
    ex.message.body = body;
    ex
}

fn message_json(m: &Message) -> serde_json::Value {
    let headers: serde_json::Map<String, serde_json::Value> = m
        .headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_json()))
        .collect();
    serde_json::json!({"headers": headers, "body": body_json(&m.body)})
}

/// A body as a JSON value: JSON as is, text as a string, bytes as (lossy) text.
pub fn body_json(body: &Body) -> serde_json::Value {
    match body {
        Body::Empty => serde_json::Value::Null,
        Body::Json(j) => (**j).clone(),
        Body::Text(t) => serde_json::Value::String(t.to_string()),
        Body::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(b).into_owned()),
    }
}

fn body_text(body: &Body) -> String {
    match body {
        Body::Empty => String::new(),
        Body::Text(t) => t.to_string(),
        Body::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Body::Json(j) => match &**j {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, bodies: &[&str]) -> Exchange {
        let strategy = builtin(name).expect(name);
        let parts = bodies.iter().map(|b| Exchange::new(*b));
        fold(&*strategy, parts, None).unwrap().unwrap()
    }

    #[test]
    fn names_resolve_in_every_spelling() {
        for name in [
            "grouped_body",
            "groupedBody",
            "GroupedBodyAggregationStrategy",
            "org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy",
            "#class:org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy",
            "collect_all",
        ] {
            assert!(builtin(name).is_some(), "{name}");
        }
        assert!(builtin("GroupedBodyStrategy").is_none());
        assert!(builtin("myStrategy").is_none());
        assert!(builtin("use_latest?delimiter=,").is_none());
        assert!(builtin("string?size=3").is_none());
    }

    #[test]
    fn grouped_body_collects_in_order() {
        let out = run("grouped_body", &["a", "b", "c"]);
        assert_eq!(out.message.body, Body::from(json!(["a", "b", "c"])));
    }

    #[test]
    fn grouped_message_keeps_headers() {
        let strategy = builtin("GroupedExchangeAggregationStrategy").unwrap();
        let mut first = Exchange::new("a");
        first.message.headers.insert("k", "v");
        let out = fold(&*strategy, [first], None).unwrap().unwrap();
        assert_eq!(
            out.message.body,
            Body::from(json!([{"headers": {"k": "v"}, "body": "a"}]))
        );
    }

    #[test]
    fn latest_original_and_string() {
        assert_eq!(run("use_latest", &["a", "b"]).message.body, Body::from("b"));
        assert_eq!(
            run("use_original", &["a", "b"]).message.body,
            Body::from("a")
        );
        let joined = Builtin::String {
            delimiter: ",".into(),
        };
        let out = fold(&joined, ["a", "b"].map(Exchange::new), None)
            .unwrap()
            .unwrap();
        assert_eq!(out.message.body, Body::from("a,b"));
        let named = builtin("StringAggregationStrategy?delimiter=%20-%20").unwrap();
        let out = fold(&*named, ["a", "b"].map(Exchange::new), None)
            .unwrap()
            .unwrap();
        assert_eq!(out.message.body, Body::from("a - b"));
    }

    #[test]
    fn use_original_returns_the_fan_out_input() {
        let strategy = builtin("UseOriginalAggregationStrategy").unwrap();
        let original = Exchange::new("in");
        let out = fold(&*strategy, ["a", "b"].map(Exchange::new), Some(&original))
            .unwrap()
            .unwrap();
        assert_eq!(out.message.body, Body::from("in"));
        assert_eq!(out.id, original.id);
    }

    #[test]
    fn nothing_to_fold_is_none() {
        let strategy = builtin("grouped_body").unwrap();
        assert!(fold(&*strategy, Vec::new(), None).unwrap().is_none());
    }
}
