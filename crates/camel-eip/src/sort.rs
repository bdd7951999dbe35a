//! Sort: the expression's list (the body when there is none) sorted, as the body.
//!
//! A JSON array is sorted as it is; text is sorted by lines. The natural order puts
//! null, then booleans, numbers (by value), strings, arrays and objects; `reverse` turns
//! it around. Camel's comparator is a Java bean; here it is one of these two names.
//!
//! ```
//! use camel_api::{Body, Exchange};
//! use camel_eip::sort::{sort, Order};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let step = sort(None, Order::Natural);
//! let out = step.process(Exchange::new(serde_json::json!([3, 1, 2]))).await.unwrap();
//! assert_eq!(out.message.body, Body::from(serde_json::json!([1, 2, 3])));
//! # }
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use camel_api::{Body, BoxExpression, BoxProcessor, CamelError, Exchange, Value};
use serde_json::Value as Json;

/// The order of a sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Ascending, in the natural order.
    Natural,
    /// Descending.
    Reverse,
}

impl Order {
    /// The order called `name` (`natural`, `reverse`, any case).
    pub fn named(name: &str) -> Option<Order> {
        match name.trim().to_ascii_lowercase().as_str() {
            "natural" | "ascending" => Some(Order::Natural),
            "reverse" | "descending" => Some(Order::Reverse),
            _ => None,
        }
    }
}

/// A sort step over `expression` (the body when `None`).
pub fn sort(expression: Option<BoxExpression>, order: Order) -> BoxProcessor {
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let value = match &expression {
            Some(e) => e.evaluate(ex)?,
            None => ex.message.body.to_value(),
        };
        let mut items = items(value)?;
        items.sort_by(natural);
        if order == Order::Reverse {
            items.reverse();
        }
        ex.message.body = Body::Json(Arc::new(Json::Array(items)));
        Ok(())
    })
    .named("sort")
}

fn items(value: Value) -> Result<Vec<Json>, CamelError> {
    let lines =
        |text: &str| -> Vec<Json> { text.lines().map(|l| Json::String(l.to_string())).collect() };
    Ok(match value {
        Value::Null => Vec::new(),
        Value::Json(j) => match &*j {
            Json::Array(items) => items.clone(),
            Json::String(s) => lines(s),
            other => vec![other.clone()],
        },
        Value::Text(t) => match serde_json::from_str::<Json>(&t) {
            Ok(Json::Array(items)) if t.trim_start().starts_with('[') => items,
            _ => lines(&t),
        },
        Value::Bytes(b) => {
            let text = std::str::from_utf8(&b)
                .map_err(|e| CamelError::conversion("text", format!("sort: {e}")))?;
            lines(text)
        }
        other => vec![other.to_json()],
    })
}

fn rank(v: &Json) -> u8 {
    match v {
        Json::Null => 0,
        Json::Bool(_) => 1,
        Json::Number(_) => 2,
        Json::String(_) => 3,
        Json::Array(_) => 4,
        Json::Object(_) => 5,
    }
}

/// The natural order of JSON values (a total order: NaN cannot occur in JSON).
fn natural(a: &Json, b: &Json) -> Ordering {
    match (a, b) {
        (Json::Bool(x), Json::Bool(y)) => x.cmp(y),
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&y.as_f64().unwrap_or(0.0)),
        },
        (Json::String(x), Json::String(y)) => x.cmp(y),
        _ => rank(a)
            .cmp(&rank(b))
            .then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn sorted(body: impl Into<Body>, order: Order) -> Body {
        sort(None, order)
            .process(Exchange::new(body))
            .await
            .unwrap()
            .message
            .body
    }

    #[tokio::test]
    async fn json_text_and_mixed() {
        assert_eq!(
            sorted(json!([10, 9, 2.5, -1]), Order::Natural).await,
            Body::from(json!([-1, 2.5, 9, 10]))
        );
        assert_eq!(
            sorted("b\na\nc", Order::Reverse).await,
            Body::from(json!(["c", "b", "a"]))
        );
        assert_eq!(
            sorted(json!(["a", 1, null, true]), Order::Natural).await,
            Body::from(json!([null, true, 1, "a"]))
        );
        assert_eq!(Order::named("Reverse"), Some(Order::Reverse));
        assert_eq!(Order::named("byDate"), None);
    }

    #[tokio::test]
    async fn an_expression_chooses_the_list() {
        let e = camel_language::jsonpath("$.items", false).unwrap();
        let out = sort(Some(e), Order::Natural)
            .process(Exchange::new(json!({"items": [2, 1]})))
            .await
            .unwrap();
        assert_eq!(out.message.body, Body::from(json!([1, 2])));
    }
}
