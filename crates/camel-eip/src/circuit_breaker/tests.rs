use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use tower::{Service, ServiceExt};

use super::*;

fn settings(window: u32, wait_secs: u64, trial: u32) -> BreakerSettings {
    BreakerSettings {
        thresholds: Thresholds {
            window_size: window,
            minimum_number_of_calls: window,
            wait_in_open: Duration::from_secs(wait_secs),
            half_open_calls: trial,
            ..Thresholds::default()
        },
        ..BreakerSettings::default()
    }
}

/// A backend that fails while `down` is set, counting its calls.
fn backend(down: Arc<AtomicBool>, calls: Arc<AtomicUsize>) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        calls.fetch_add(1, Ordering::SeqCst);
        if down.load(Ordering::SeqCst) {
            return Err(CamelError::user("java.io.IOException", "backend down"));
        }
        ex.message.body = Body::from("live");
        Ok(ex)
    })
}

fn fallback() -> BoxProcessor {
    BoxProcessor::sync(|mut ex: Exchange| {
        let why = ex.properties.get("CamelExceptionKind").cloned();
        ex.message.body = Body::from(format!("fallback after {}", why.unwrap_or_default()));
        Ok(ex)
    })
}

fn flag(ex: &Exchange, name: &str) -> bool {
    ex.properties.get(name) == Some(&Value::Bool(true))
}

#[tokio::test(start_paused = true)]
async fn opens_then_half_opens_then_closes_with_fallback_output() {
    let down = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicUsize::new(0));
    let breaker = CircuitBreaker::new(
        settings(2, 30, 1),
        Some(fallback()),
        backend(down.clone(), calls.clone()),
    );
    let step = breaker.clone().into_processor();

    for _ in 0..2 {
        let out = step.process(Exchange::new("x")).await.unwrap();
        assert_eq!(out.message.body, Body::from("fallback after IOException"));
        assert!(flag(&out, RESPONSE_FROM_FALLBACK));
        assert!(!flag(&out, RESPONSE_SUCCESSFUL_EXECUTION));
        assert!(!flag(&out, RESPONSE_SHORT_CIRCUITED));
    }
    assert_eq!(breaker.state(), CircuitState::Open);

    // Open: the backend is not called, the fallback answers, short-circuited.
    let out = step.process(Exchange::new("x")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(flag(&out, RESPONSE_SHORT_CIRCUITED));
    assert_eq!(
        out.message.body,
        Body::from("fallback after CallNotPermittedException")
    );

    // The backend recovers; 29 s later the circuit is still open.
    down.store(false, Ordering::SeqCst);
    tokio::time::advance(Duration::from_secs(29)).await;
    step.process(Exchange::new("x")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(breaker.state(), CircuitState::Open);

    // After the wait the next call is a trial call; it succeeds and closes the circuit.
    tokio::time::advance(Duration::from_secs(1)).await;
    let out = step.process(Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("live"));
    assert!(flag(&out, RESPONSE_SUCCESSFUL_EXECUTION));
    assert!(!flag(&out, RESPONSE_FROM_FALLBACK));
    assert_eq!(breaker.state(), CircuitState::Closed);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_failed_trial_call_reopens_the_circuit() {
    let down = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicUsize::new(0));
    let breaker = CircuitBreaker::new(settings(1, 5, 1), None, backend(down, calls.clone()));
    let step = breaker.clone().into_processor();
    assert!(step.process(Exchange::new("x")).await.is_err());
    assert_eq!(breaker.state(), CircuitState::Open);
    tokio::time::advance(Duration::from_secs(5)).await;
    let err = step.process(Exchange::new("x")).await.unwrap_err();
    assert_eq!(
        err.kind_name(),
        "IOException",
        "no fallback: the error stands"
    );
    assert_eq!(breaker.state(), CircuitState::Open);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn without_fallback_a_refused_exchange_passes_unless_told_to_throw() {
    let down = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicUsize::new(0));
    let step = CircuitBreaker::new(
        settings(1, 60, 1),
        None,
        backend(down.clone(), calls.clone()),
    )
    .into_processor();
    assert!(step.process(Exchange::new("x")).await.is_err());
    let out = step.process(Exchange::new("in")).await.unwrap();
    assert_eq!(out.message.body, Body::from("in"));
    assert!(flag(&out, RESPONSE_SHORT_CIRCUITED));

    let throwing = BreakerSettings {
        throw_when_open: true,
        ..settings(1, 60, 1)
    };
    let step = CircuitBreaker::new(throwing, None, backend(down, calls)).into_processor();
    assert!(step.process(Exchange::new("x")).await.is_err());
    let err = step.process(Exchange::new("x")).await.unwrap_err();
    assert_eq!(err.kind_name(), "CallNotPermittedException");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_fails_and_goes_to_the_fallback() {
    let slow = BoxProcessor::from_fn(|ex: Exchange| async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(ex)
    });
    let s = BreakerSettings {
        timeout: Some(Duration::from_millis(200)),
        ..settings(10, 60, 1)
    };
    let step = CircuitBreaker::new(s, Some(fallback()), slow).into_processor();
    let started = tokio::time::Instant::now();
    let out = step.process(Exchange::new("x")).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    assert!(flag(&out, RESPONSE_TIMED_OUT));
    assert!(flag(&out, RESPONSE_FROM_FALLBACK));
    assert_eq!(
        out.message.body,
        Body::from("fallback after TimeoutException")
    );
}

#[tokio::test(start_paused = true)]
async fn slow_calls_open_the_circuit() {
    let slow = BoxProcessor::from_fn(|ex: Exchange| async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(ex)
    });
    let mut s = settings(2, 60, 1);
    s.thresholds.slow_call_rate = 100.0;
    s.thresholds.slow_call_duration = Duration::from_secs(2);
    let breaker = CircuitBreaker::new(s, None, slow);
    let step = breaker.clone().into_processor();
    for _ in 0..2 {
        let out = step.process(Exchange::new("x")).await.unwrap();
        assert!(flag(&out, RESPONSE_SUCCESSFUL_EXECUTION));
    }
    assert_eq!(breaker.state(), CircuitState::Open);
}

#[tokio::test(start_paused = true)]
async fn recorded_and_ignored_kinds() {
    let failing = BoxProcessor::sync(|_| Err(CamelError::user("IllegalArgumentException", "bad")));
    let mut s = settings(1, 60, 1);
    s.record_exceptions = vec!["java.io.IOException".into()];
    let breaker = CircuitBreaker::new(s, None, failing.clone());
    let step = breaker.clone().into_processor();
    for _ in 0..3 {
        assert!(step.process(Exchange::new("x")).await.is_err());
    }
    assert_eq!(breaker.state(), CircuitState::Closed, "not a recorded kind");

    let mut s = settings(1, 60, 1);
    s.ignore_exceptions = vec!["IllegalArgumentException".into()];
    let breaker = CircuitBreaker::new(s, None, failing);
    let step = breaker.clone().into_processor();
    assert!(step.process(Exchange::new("x")).await.is_err());
    assert_eq!(breaker.state(), CircuitState::Closed, "an ignored kind");
}

#[tokio::test(start_paused = true)]
async fn as_a_tower_layer_it_shares_one_circuit_and_passes_readiness() {
    let (mock, mut handle) = tower_test::mock::pair::<Exchange, Exchange>();
    let mock = mock.map_err(|e| CamelError::processor(e.to_string()));
    let layer = CircuitBreakerLayer::new(settings(1, 60, 1), None);
    let mut svc = tower::Layer::layer(&layer, mock);
    handle.allow(0);
    assert!(futures::poll!(svc.ready()).is_pending(), "inner not ready");
    handle.allow(1);
    let call = svc.ready().await.unwrap().call(Exchange::new("x"));
    let (_req, reply) = handle.next_request().await.unwrap();
    reply.send_error(CamelError::processor("boom"));
    assert!(call.await.is_err());
    // The circuit is open: the next exchange passes by without reaching the mock.
    handle.allow(1);
    let out = svc
        .ready()
        .await
        .unwrap()
        .call(Exchange::new("y"))
        .await
        .unwrap();
    assert!(flag(&out, RESPONSE_SHORT_CIRCUITED));
}

#[tokio::test(start_paused = true)]
async fn camel_4_properties_say_how_each_exchange_left() {
    let names = [
        CIRCUIT_BREAKER_SUCCESSFUL_EXECUTION,
        CIRCUIT_BREAKER_FROM_FALLBACK,
        CIRCUIT_BREAKER_SHORT_CIRCUITED,
        CIRCUIT_BREAKER_TIMED_OUT,
        CIRCUIT_BREAKER_REJECTED,
    ];
    let flags = |ex: &Exchange| names.map(|n| flag(ex, n));
    let down = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let with_fallback = CircuitBreaker::new(
        settings(2, 30, 1),
        Some(fallback()),
        backend(down.clone(), calls.clone()),
    )
    .into_processor();
    let ok = with_fallback.process(Exchange::new("x")).await.unwrap();
    assert_eq!(flags(&ok), [true, false, false, false, false]);
    down.store(true, Ordering::SeqCst);
    let failed = with_fallback.process(Exchange::new("x")).await.unwrap();
    assert_eq!(flags(&failed), [false, true, true, false, false]);
    // The window (2 calls, one failed) is at 50 %: open; the next call is refused.
    let refused = with_fallback.process(Exchange::new("x")).await.unwrap();
    assert_eq!(flags(&refused), [false, true, true, false, true]);
    assert!(flag(&refused, RESPONSE_SHORT_CIRCUITED));

    let no_fallback = CircuitBreaker::new(settings(1, 30, 1), None, backend(down, calls));
    let step = no_fallback.clone().into_processor();
    assert!(step.process(Exchange::new("x")).await.is_err());
    assert_eq!(no_fallback.state(), CircuitState::Open);
    let refused = step.process(Exchange::new("x")).await.unwrap();
    assert_eq!(flags(&refused), [false, false, true, false, true]);
}
