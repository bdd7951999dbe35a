//! Combining the branch results of a multicast into one exchange.

use camel_api::names::CORRELATION_ID;
use camel_api::{Body, Exchange};

use super::config::AggregationStrategy;

/// Combines `results` (one per branch, in declaration order) for `original`.
pub(crate) fn aggregate(
    strategy: AggregationStrategy,
    original: Exchange,
    results: Vec<Exchange>,
) -> Exchange {
    match strategy {
        AggregationStrategy::Original => original,
        AggregationStrategy::LastWins => match results.into_iter().last() {
            Some(last) => unstopped(last, &original),
            None => original,
        },
        AggregationStrategy::CollectAll => {
            let items = results.iter().map(|r| body_json(&r.message.body)).collect();
            let mut combined = original;
            combined.message.body = Body::from(serde_json::Value::Array(items));
            combined
        }
    }
}

/// The branch's message and properties on a fresh exchange with the original id and
/// pattern: a `stop` inside one branch ends that branch, not the route after the multicast.
/// `CamelCorrelationId` stays the original's: the branch's names the original itself.
fn unstopped(branch: Exchange, original: &Exchange) -> Exchange {
    let mut ex = Exchange::continuing(original, branch.message);
    ex.properties = branch.properties;
    match original.property(CORRELATION_ID) {
        Some(v) => ex.properties.insert(CORRELATION_ID, v.clone()),
        None => {
            ex.properties.remove(CORRELATION_ID);
        }
    }
    ex
}

fn body_json(body: &Body) -> serde_json::Value {
    match body {
        Body::Empty => serde_json::Value::Null,
        Body::Json(j) => (**j).clone(),
        Body::Text(t) => serde_json::Value::String(t.to_string()),
        Body::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(b).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collect_all_maps_each_body_kind() {
        let results = vec![
            Exchange::new(Body::Empty),
            Exchange::new(serde_json::json!({"a": 1})),
            Exchange::new("t"),
            Exchange::new(b"b".to_vec()),
        ];
        let out = aggregate(
            AggregationStrategy::CollectAll,
            Exchange::new("in"),
            results,
        );
        assert_eq!(
            out.message.body,
            Body::from(serde_json::json!([null, {"a": 1}, "t", "b"]))
        );
    }

    #[test]
    fn last_wins_does_not_carry_a_branch_stop() {
        let original = Exchange::new("in");
        let mut last = Exchange::new("last");
        last.stop();
        let out = aggregate(AggregationStrategy::LastWins, original.clone(), vec![last]);
        assert_eq!(out.message.body, Body::from("last"));
        assert_eq!(out.id, original.id);
        assert!(!out.is_stopped());
    }
}
