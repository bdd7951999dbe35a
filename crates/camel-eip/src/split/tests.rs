use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use camel_language::Tokenizer;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::aggregation::builtin;

/// A part as seen: body, index, size, complete.
type Part = (Body, Value, Option<Value>, Value);

/// Records every part it sees.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Part>>>);

impl Seen {
    fn processor(&self) -> BoxProcessor {
        let seen = self.clone();
        BoxProcessor::sync(move |ex: Exchange| {
            seen.0.lock().unwrap().push((
                ex.message.body.clone(),
                ex.property(SPLIT_INDEX).cloned().unwrap_or_default(),
                ex.property(SPLIT_SIZE).cloned(),
                ex.property(SPLIT_COMPLETE).cloned().unwrap_or_default(),
            ));
            Ok(ex)
        })
    }

    fn bodies(&self) -> Vec<Body> {
        self.0.lock().unwrap().iter().map(|s| s.0.clone()).collect()
    }
}

fn tokenize(token: &str) -> SplitExpression {
    SplitExpression::Tokenize(Tokenizer::new(token, false).unwrap())
}

async fn split(
    options: SplitOptions,
    steps: BoxProcessor,
    ex: Exchange,
) -> Result<Exchange, CamelError> {
    Split::new(options, steps)
        .into_processor()
        .process(ex)
        .await
}

fn texts(items: &[&str]) -> Vec<Body> {
    items.iter().map(|s| Body::from(*s)).collect()
}

#[tokio::test]
async fn tokenize_sets_index_size_and_complete() {
    let seen = Seen::default();
    let out = split(
        SplitOptions::new(tokenize(",")),
        seen.processor(),
        Exchange::new("a,b,c"),
    )
    .await
    .unwrap();
    assert_eq!(
        out.message.body,
        Body::from("a,b,c"),
        "without a strategy: the input"
    );
    let got = seen.0.lock().unwrap().clone();
    let props: Vec<_> = got
        .iter()
        .map(|s| (s.1.clone(), s.2.clone(), s.3.clone()))
        .collect();
    assert_eq!(
        props,
        [
            (
                Value::from(0u64),
                Some(Value::from(3u64)),
                Value::Bool(false)
            ),
            (
                Value::from(1u64),
                Some(Value::from(3u64)),
                Value::Bool(false)
            ),
            (
                Value::from(2u64),
                Some(Value::from(3u64)),
                Value::Bool(true)
            ),
        ]
    );
    assert_eq!(seen.bodies(), texts(&["a", "b", "c"]));
}

#[tokio::test]
async fn tokenizer_options_reach_the_parts() {
    let t = Tokenizer::new("[;,]", true)
        .unwrap()
        .group(2)
        .skip_first(true);
    let seen = Seen::default();
    split(
        SplitOptions::new(SplitExpression::Tokenize(t)),
        seen.processor(),
        Exchange::new("h;a,b;c"),
    )
    .await
    .unwrap();
    assert_eq!(seen.bodies(), texts(&["a\nb", "c"]));
    let seen = Seen::default();
    let t = Tokenizer::new(",", false).unwrap().include_tokens(true);
    split(
        SplitOptions::new(SplitExpression::Tokenize(t)),
        seen.processor(),
        Exchange::new("a,b"),
    )
    .await
    .unwrap();
    assert_eq!(seen.bodies(), texts(&["a,", "b"]));
}

#[tokio::test]
async fn body_array_text_lines_and_expressions() {
    let seen = Seen::default();
    let body = Exchange::new(json!(["x", {"n": 1}, 2]));
    split(
        SplitOptions::new(SplitExpression::Body),
        seen.processor(),
        body,
    )
    .await
    .unwrap();
    assert_eq!(
        seen.bodies(),
        [
            Body::from("x"),
            Body::from(json!({"n": 1})),
            Body::from(json!(2))
        ]
    );
    let seen = Seen::default();
    split(
        SplitOptions::new(SplitExpression::Body),
        seen.processor(),
        Exchange::new("l1\nl2\n"),
    )
    .await
    .unwrap();
    assert_eq!(seen.bodies(), texts(&["l1", "l2"]));
    let seen = Seen::default();
    let jsonpath = camel_language::jsonpath("$.orders[*].id", false).unwrap();
    let ex = Exchange::new(json!({"orders": [{"id": 1}, {"id": 2}]}));
    split(
        SplitOptions::new(SplitExpression::Expression(jsonpath)),
        seen.processor(),
        ex,
    )
    .await
    .unwrap();
    assert_eq!(seen.bodies(), [Body::from(json!(1)), Body::from(json!(2))]);
    let seen = Seen::default();
    let simple = camel_language::simple("${header.list}").unwrap();
    let ex = Exchange::new("").with_header("list", "[\"p\", \"q\"]");
    split(
        SplitOptions::new(SplitExpression::Expression(simple)),
        seen.processor(),
        ex,
    )
    .await
    .unwrap();
    assert_eq!(seen.bodies(), texts(&["p", "q"]));
}

#[tokio::test]
async fn headers_and_properties_are_copied_to_each_part() {
    let parent = Exchange::new("a,b").with_header("h", "v");
    let parent_id = parent.id;
    let ids = Arc::new(Mutex::new(Vec::new()));
    let log = ids.clone();
    let check = BoxProcessor::sync(move |ex: Exchange| {
        assert_eq!(ex.header("h"), Some(&Value::from("v")));
        log.lock().unwrap().push(ex.id);
        Ok(ex)
    });
    split(SplitOptions::new(tokenize(",")), check, parent)
        .await
        .unwrap();
    let ids = ids.lock().unwrap();
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|id| *id != parent_id) && ids[0] != ids[1]);
}

#[tokio::test]
async fn streaming_reads_a_lazy_file_and_sets_the_size_on_the_last_part() {
    let dir = tempfile_dir();
    let path = dir.join("in.txt");
    let lines: Vec<String> = (0..5000).map(|i| format!("line {i}")).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let seen = Seen::default();
    let mut options = SplitOptions::new(SplitExpression::Body);
    options.streaming = true;
    let ex =
        Exchange::new(Body::Empty).with_header("CamelFileAbsolutePath", path.to_str().unwrap());
    split(options, seen.processor(), ex).await.unwrap();
    let got = seen.0.lock().unwrap().clone();
    assert_eq!(got.len(), 5000);
    assert_eq!(got[4999].0, Body::from("line 4999"));
    assert_eq!(got[0].2, None, "the size is not known before the end");
    assert_eq!(got[4999].2, Some(Value::from(5000u64)));
    assert_eq!(got[4999].3, Value::Bool(true));
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "camel-split-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(start_paused = true)]
async fn aggregation_strategy_folds_in_part_order() {
    let mut options = SplitOptions::new(tokenize(","));
    options.strategy = builtin("GroupedBodyAggregationStrategy");
    options.parallel_limit = 3;
    // Later parts finish first.
    let slow_first = BoxProcessor::from_fn(|ex: Exchange| async move {
        let i = ex
            .property(SPLIT_INDEX)
            .and_then(Value::as_i64)
            .unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(30 - 10 * i as u64)).await;
        Ok(ex)
    });
    let out = split(options, slow_first, Exchange::new("a,b,c"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from(json!(["a", "b", "c"])));
}

#[tokio::test(start_paused = true)]
async fn parallel_runs_at_most_the_limit_at_once() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (r, m) = (running.clone(), most.clone());
    let step = BoxProcessor::from_fn(move |ex: Exchange| {
        let (r, m) = (r.clone(), m.clone());
        async move {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            Ok(ex)
        }
    });
    let mut options = SplitOptions::new(tokenize(","));
    options.parallel_limit = 4;
    let start = tokio::time::Instant::now();
    split(options, step, Exchange::new("1,2,3,4,5,6,7,8,9,10"))
        .await
        .unwrap();
    assert_eq!(most.load(Ordering::SeqCst), 4);
    assert_eq!(start.elapsed(), Duration::from_millis(300)); // 10 parts, 4 at a time
}

fn failing_at(bad: &'static str, seen: Seen) -> BoxProcessor {
    let record = seen.processor();
    BoxProcessor::from_fn(move |ex: Exchange| {
        let record = record.clone();
        async move {
            let ex = record.process(ex).await?;
            if ex.message.body == Body::from(bad) {
                return Err(CamelError::user(
                    "IllegalStateException",
                    format!("bad part {bad}"),
                ));
            }
            Ok(ex)
        }
    })
}

#[tokio::test]
async fn a_failing_part_fails_the_split_after_the_others_ran() {
    let seen = Seen::default();
    let e = split(
        SplitOptions::new(tokenize(",")),
        failing_at("b", seen.clone()),
        Exchange::new("a,b,c"),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind_name(), "IllegalStateException");
    assert_eq!(seen.bodies(), texts(&["a", "b", "c"]));
}

#[tokio::test]
async fn stop_on_exception_starts_no_part_after_a_failure() {
    for limit in [1, 2] {
        let seen = Seen::default();
        let mut options = SplitOptions::new(tokenize(","));
        options.stop_on_exception = true;
        options.parallel_limit = limit;
        let e = split(
            options,
            failing_at("b", seen.clone()),
            Exchange::new("a,b,c,d,e"),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("bad part b"), "{e}");
        let n = seen.bodies().len();
        assert!(n <= 1 + limit, "limit {limit}: {n} parts ran");
    }
}

#[tokio::test(start_paused = true)]
async fn timeout_abandons_unfinished_parts_and_keeps_the_rest() {
    let step = BoxProcessor::from_fn(|ex: Exchange| async move {
        if ex.message.body == Body::from("slow") {
            std::future::pending::<()>().await;
        }
        Ok(ex)
    });
    let mut options = SplitOptions::new(tokenize(","));
    options.parallel_limit = 3;
    options.timeout = Some(Duration::from_millis(500));
    options.strategy = builtin("grouped_body");
    let start = tokio::time::Instant::now();
    let out = split(options, step, Exchange::new("a,slow,c"))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    assert_eq!(out.message.body, Body::from(json!(["a", "c"])));
}

#[tokio::test]
async fn an_empty_input_has_no_parts() {
    let seen = Seen::default();
    let mut options = SplitOptions::new(SplitExpression::Body);
    options.strategy = builtin("grouped_body");
    let out = split(options, seen.processor(), Exchange::new(json!([])))
        .await
        .unwrap();
    assert!(seen.bodies().is_empty());
    assert_eq!(out.message.body, Body::from(json!([])));
}

#[tokio::test]
async fn as_a_layer_the_inner_service_gets_every_part() {
    use tower::{Layer, ServiceExt};
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let inner = tower::service_fn(move |ex: Exchange| {
        c.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, CamelError>(ex) }
    });
    let svc = SplitLayer::new(SplitOptions::new(tokenize(";"))).layer(inner);
    svc.oneshot(Exchange::new("1;2;3")).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

proptest! {
    /// Split then reassemble by `CamelSplitIndex` restores the original, whatever the
    /// parts, the parallelism and whether the input is streamed.
    #[test]
    fn split_then_reassemble_by_index_restores_the_input(
        parts in proptest::collection::vec("[a-z ]{0,8}", 1..40),
        limit in 1usize..6,
        streaming in any::<bool>(),
    ) {
        let input = parts.join(",");
        let collected = Arc::new(Mutex::new(Vec::new()));
        let sink = collected.clone();
        let step = BoxProcessor::sync(move |ex: Exchange| {
            let i = ex.property(SPLIT_INDEX).and_then(Value::as_i64).unwrap_or(-1);
            let text = ex.message.body.as_text().unwrap_or_default().into_owned();
            sink.lock().unwrap().push((i, text));
            Ok(ex)
        });
        let mut options = SplitOptions::new(tokenize(","));
        options.parallel_limit = limit;
        options.streaming = streaming;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(split(options, step, Exchange::new(input.clone()))).unwrap();
        let mut got = collected.lock().unwrap().clone();
        got.sort();
        let indexes: Vec<i64> = got.iter().map(|g| g.0).collect();
        // A trailing empty part is not a part (as with the lines of a file).
        let mut expected = parts.clone();
        if expected.last().is_some_and(|p| p.is_empty()) {
            expected.pop();
        }
        prop_assert_eq!(indexes, (0..expected.len() as i64).collect::<Vec<_>>());
        let rebuilt: Vec<String> = got.into_iter().map(|g| g.1).collect();
        prop_assert_eq!(rebuilt.join(","), expected.join(","));
    }
}
