//! The idempotent consumer's options: eager, skip_duplicate, remove_on_failure,
//! completion_eager, and the bounded memory repository.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange, Expression, Value};
use camel_eip::idempotent::{
    IdempotentConsumer, IdempotentOptions, IdempotentRepository, MemoryIdempotentRepository,
    DUPLICATE_MESSAGE,
};

#[derive(Debug)]
struct Id;

impl Expression for Id {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header("id").cloned().unwrap_or_default())
    }
}

fn ex(id: &str) -> Exchange {
    Exchange::new("x").with_header("id", id)
}

fn counting(fail_on: Option<&'static str>) -> (BoxProcessor, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let steps = BoxProcessor::sync(move |e: Exchange| {
        counter.fetch_add(1, Ordering::SeqCst);
        if fail_on.is_some_and(|f| e.header("id").and_then(Value::as_str) == Some(f)) {
            return Err(CamelError::processor("boom"));
        }
        Ok(e)
    });
    (steps, runs)
}

#[tokio::test]
async fn duplicates_are_skipped_and_marked() {
    let (steps, runs) = counting(None);
    let repo = Arc::new(MemoryIdempotentRepository::new(10));
    let c = IdempotentConsumer::new(Arc::new(Id), repo, steps, IdempotentOptions::default());
    let first = c.process(ex("a")).await.unwrap();
    assert!(first.property(DUPLICATE_MESSAGE).is_none());
    let second = c.process(ex("a")).await.unwrap();
    assert_eq!(second.property(DUPLICATE_MESSAGE), Some(&Value::from(true)));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn skip_duplicate_false_runs_the_steps_with_the_property() {
    let (_, _) = counting(None);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let steps = BoxProcessor::sync(move |e: Exchange| {
        sink.lock()
            .unwrap()
            .push(e.property(DUPLICATE_MESSAGE).cloned());
        Ok(e)
    });
    let options = IdempotentOptions {
        skip_duplicate: false,
        ..Default::default()
    };
    let c = IdempotentConsumer::new(
        Arc::new(Id),
        Arc::new(MemoryIdempotentRepository::default()),
        steps,
        options,
    );
    c.process(ex("a")).await.unwrap();
    c.process(ex("a")).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [None, Some(Value::from(true))]);
}

#[tokio::test]
async fn a_failure_forgets_the_id_unless_remove_on_failure_is_off() {
    for remove_on_failure in [true, false] {
        let (steps, runs) = counting(Some("a"));
        let repo = Arc::new(MemoryIdempotentRepository::default());
        let options = IdempotentOptions {
            remove_on_failure,
            ..Default::default()
        };
        let c = IdempotentConsumer::new(Arc::new(Id), repo.clone(), steps, options);
        assert!(c.process(ex("a")).await.is_err());
        let again = c.process(ex("a")).await;
        // Removed: the redelivery runs (and fails) again. Kept: it is a skipped duplicate.
        assert_eq!(again.is_ok(), !remove_on_failure);
        assert_eq!(repo.contains("a").await.unwrap(), !remove_on_failure);
        let expected_runs = if remove_on_failure { 2 } else { 1 };
        assert_eq!(
            runs.load(Ordering::SeqCst),
            expected_runs,
            "remove_on_failure={remove_on_failure}"
        );
    }
}

#[tokio::test]
async fn lazy_mode_records_the_id_only_after_success() {
    let (steps, runs) = counting(Some("bad"));
    let repo = Arc::new(MemoryIdempotentRepository::default());
    let options = IdempotentOptions {
        eager: false,
        ..Default::default()
    };
    let c = IdempotentConsumer::new(Arc::new(Id), repo.clone(), steps, options);
    assert!(c.process(ex("bad")).await.is_err());
    assert!(!repo.contains("bad").await.unwrap());
    c.process(ex("ok")).await.unwrap();
    assert!(repo.contains("ok").await.unwrap());
    c.process(ex("ok")).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// In a unit of work (a route), `completion_eager: false` completes the id when the route
/// is done: a failure after the block forgets it (and a lazy consumer records it only then).
/// `true` completes it when the steps return. Outside a unit both complete at the block's end.
#[tokio::test]
async fn completion_eager_decides_when_the_id_is_completed() {
    use camel_eip::unit_of_work::scoped;
    for (completion_eager, eager, in_unit, kept) in [
        (false, true, true, false),
        (false, false, true, false),
        (true, true, true, true),
        (true, false, true, true),
        (false, true, false, true),
    ] {
        let (steps, _) = counting(None);
        let repo = Arc::new(MemoryIdempotentRepository::default());
        let options = IdempotentOptions {
            eager,
            completion_eager,
            ..Default::default()
        };
        let block = IdempotentConsumer::new(Arc::new(Id), repo.clone(), steps, options);
        let after = BoxProcessor::sync(|_| Err(CamelError::processor("after the block")));
        let route = camel_eip::pipeline::pipeline(vec![block.into_processor(), after]);
        let route = if in_unit { scoped(route) } else { route };
        assert!(route.process(ex("a")).await.is_err());
        assert_eq!(
            repo.contains("a").await.unwrap(),
            kept,
            "completion_eager={completion_eager} eager={eager} in_unit={in_unit}"
        );
    }
}

#[tokio::test]
async fn a_missing_id_is_an_error() {
    let (steps, _) = counting(None);
    let c = IdempotentConsumer::new(
        Arc::new(Id),
        Arc::new(MemoryIdempotentRepository::default()),
        steps,
        IdempotentOptions::default(),
    );
    let err = c.process(Exchange::new("x")).await.unwrap_err();
    assert_eq!(err.kind_name(), "NoMessageIdException");
}

#[tokio::test]
async fn the_memory_repository_is_bounded() {
    let (steps, runs) = counting(None);
    let c = IdempotentConsumer::new(
        Arc::new(Id),
        Arc::new(MemoryIdempotentRepository::new(2)),
        steps,
        IdempotentOptions::default(),
    );
    for id in ["a", "b", "c", "a"] {
        c.process(ex(id)).await.unwrap();
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        4,
        "a was forgotten when c came in"
    );
}
