use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{
    error_kind as names, Body, BoxPredicate, BoxProcessor, CamelError, Exchange, Predicate,
    ShutdownReason, StepLifecycle,
};
use tokio::time::Instant;

use super::*;

/// A step failing its first `fails` calls (forever with `u32::MAX`), recording when each
/// call happened.
fn flaky(fails: u32, error: CamelError) -> (BoxProcessor, Arc<Mutex<Vec<Instant>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let step = BoxProcessor::sync(move |ex: Exchange| {
        let mut c = seen.lock().unwrap();
        c.push(Instant::now());
        if c.len() as u32 <= fails {
            Err(error.clone())
        } else {
            Ok(ex)
        }
    });
    (step, calls)
}

fn gaps(calls: &[Instant]) -> Vec<u64> {
    calls
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis() as u64)
        .collect()
}

fn mailbox() -> (BoxProcessor, Arc<Mutex<Vec<Exchange>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let into = got.clone();
    let p = BoxProcessor::sync(move |ex: Exchange| {
        into.lock().unwrap().push(ex.clone());
        Ok(ex)
    });
    (p, got)
}

fn dead_letter(endpoint: BoxProcessor) -> HandlerKind {
    HandlerKind::DeadLetter(DeadLetter {
        endpoint,
        uri: "mock:dead".into(),
        use_original_message: false,
        use_original_body: false,
        handle_new_exception: true,
    })
}

#[tokio::test(start_paused = true)]
async fn exponential_back_off_waits_exact_delays_then_dead_letters_with_the_counter() {
    let (step, calls) = flaky(u32::MAX, CamelError::processor("boom"));
    let (dead, letters) = mailbox();
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 3,
        redelivery_delay: Duration::from_millis(100),
        use_exponential_back_off: true,
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", dead_letter(dead), policy));
    let out = h
        .wrap(step, "steps[0].to")
        .process(Exchange::new("x"))
        .await
        .unwrap();
    assert!(out.is_stopped(), "a dead-lettered exchange ends its route");
    assert_eq!(gaps(&calls.lock().unwrap()), [100, 200, 400]);
    let letters = letters.lock().unwrap();
    assert_eq!(letters.len(), 1);
    let l = &letters[0];
    assert_eq!(l.header(names::REDELIVERY_COUNTER), Some(&3i64.into()));
    assert_eq!(l.header(names::REDELIVERY_MAX_COUNTER), Some(&3i64.into()));
    assert_eq!(l.header(names::REDELIVERED), Some(&true.into()));
    assert_eq!(l.property(names::FAILURE_ROUTE_ID), Some(&"r".into()));
    assert_eq!(
        l.property(names::FAILURE_ENDPOINT),
        Some(&"steps[0].to".into())
    );
    assert_eq!(l.property(names::ERROR_HANDLER_HANDLED), Some(&true.into()));
    assert_eq!(l.property(names::EXCEPTION_CAUGHT), Some(&"boom".into()));
    assert_eq!(l.caught_error().map(|e| e.message()), Some("boom".into()));
}

#[tokio::test(start_paused = true)]
async fn collision_avoidance_stays_in_bounds_and_the_cap_holds() {
    let (step, calls) = flaky(u32::MAX, CamelError::processor("boom"));
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 20,
        redelivery_delay: Duration::from_millis(1000),
        use_collision_avoidance: true,
        collision_avoidance_factor: 0.5,
        maximum_redelivery_delay: Duration::from_millis(1200),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", HandlerKind::Default, policy));
    let err = h.wrap(step, "s").process(Exchange::default()).await;
    assert!(
        err.is_err(),
        "the default handler fails an exhausted exchange"
    );
    let g = gaps(&calls.lock().unwrap());
    assert_eq!(g.len(), 20);
    assert!(g.iter().all(|d| (500..=1200).contains(d)), "{g:?}");
    assert!(g.iter().any(|d| *d != g[0]), "delays vary: {g:?}");
}

#[tokio::test(start_paused = true)]
async fn delay_pattern_sets_each_wait_and_success_ends_redelivery() {
    let (step, calls) = flaky(4, CamelError::processor("boom"));
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 10,
        delay_pattern: parse_delay_pattern("1:10;3:1000").unwrap(),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", HandlerKind::Default, policy));
    let out = h
        .wrap(step, "s")
        .process(Exchange::default())
        .await
        .unwrap();
    assert_eq!(gaps(&calls.lock().unwrap()), [10, 10, 1000, 1000]);
    assert_eq!(out.header(names::REDELIVERY_COUNTER), Some(&4i64.into()));
    assert!(!out.is_stopped());
}

#[tokio::test(start_paused = true)]
async fn a_longer_retry_after_wins_over_the_policy_delay() {
    let refused = CamelError::RetryAfter {
        ms: 700,
        reason: camel_api::RetryReason::Entries,
    };
    let (step, calls) = flaky(1, refused);
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 1,
        redelivery_delay: Duration::from_millis(50),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", HandlerKind::Default, policy));
    h.wrap(step, "s")
        .process(Exchange::default())
        .await
        .unwrap();
    assert_eq!(gaps(&calls.lock().unwrap()), [700]);
}

#[tokio::test(start_paused = true)]
async fn a_stopping_route_cuts_a_pending_redelivery_short_and_fails_the_exchange() {
    let (step, calls) = flaky(u32::MAX, CamelError::processor("boom"));
    let (dead, letters) = mailbox();
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 1,
        redelivery_delay: Duration::from_secs(3600),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", dead_letter(dead), policy));
    let lifecycle = h.lifecycle();
    let p = h.wrap(step, "s");
    let started = Instant::now();
    let run = tokio::spawn(async move { p.process(Exchange::default()).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
    let out = run.await.unwrap();
    assert!(matches!(out, Err(CamelError::Stopping(_))), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(calls.lock().unwrap().len(), 1, "no redelivery ran");
    assert!(
        letters.lock().unwrap().is_empty(),
        "a cut-short exchange is failed, not dead-lettered"
    );
}

#[derive(Debug)]
struct BodyIs(&'static str);
impl Predicate for BodyIs {
    fn matches(&self, ex: &Exchange) -> Result<bool, CamelError> {
        Ok(ex.message.body == Body::from(self.0))
    }
}

#[tokio::test(start_paused = true)]
async fn the_closest_clause_wins_and_handled_ends_the_route() {
    let (step, _) = flaky(
        u32::MAX,
        CamelError::user("java.lang.IllegalArgumentException", "bad"),
    );
    let (general, general_got) = mailbox();
    let (exact, exact_got) = mailbox();
    let h = ErrorHandler::new("r", HandlerKind::Default, RedeliveryPolicy::default())
        .with_clause(Clause {
            exceptions: vec!["java.lang.Exception".into()],
            steps: Some(general),
            handled: Some(Decision::Fixed(true)),
            ..Default::default()
        })
        .with_clause(Clause {
            exceptions: vec!["IllegalArgumentException".into()],
            steps: Some(exact),
            handled: Some(Decision::Fixed(true)),
            policy: Some(RedeliveryPolicy {
                maximum_redeliveries: 2,
                redelivery_delay: Duration::from_millis(5),
                ..Default::default()
            }),
            ..Default::default()
        });
    let out = Arc::new(h)
        .wrap(step, "s")
        .process(Exchange::default())
        .await
        .unwrap();
    assert!(out.is_stopped());
    assert!(general_got.lock().unwrap().is_empty());
    let got = exact_got.lock().unwrap();
    assert_eq!(got[0].header(names::REDELIVERY_COUNTER), Some(&2i64.into()));
    assert_eq!(
        got[0].caught_error().map(|e| e.kind_name().to_string()),
        Some("IllegalArgumentException".into())
    );
}

#[tokio::test(start_paused = true)]
async fn on_when_continued_and_unmatched_clauses() {
    let err = CamelError::user("OrderRejected", "no stock");
    let h = Arc::new(
        ErrorHandler::new("r", HandlerKind::Default, RedeliveryPolicy::default()).with_clause(
            Clause {
                exceptions: vec!["OrderRejected".into()],
                on_when: Some(Arc::new(BodyIs("skip")) as BoxPredicate),
                continued: Some(Decision::Fixed(true)),
                ..Default::default()
            },
        ),
    );
    let (step, _) = flaky(u32::MAX, err.clone());
    let out = h
        .wrap(step, "s")
        .process(Exchange::new("skip"))
        .await
        .unwrap();
    assert!(!out.is_stopped(), "continued goes on with the route");
    assert_eq!(
        out.property(names::ERROR_HANDLER_HANDLED),
        Some(&false.into())
    );
    let (step, _) = flaky(u32::MAX, err);
    let failed = h.wrap(step, "s").process(Exchange::new("other")).await;
    assert!(
        failed.is_err(),
        "on_when false: no clause, the default handler fails it"
    );
}

#[tokio::test(start_paused = true)]
async fn use_original_message_sends_what_entered_the_route() {
    let (dead, letters) = mailbox();
    let h = Arc::new(ErrorHandler::new(
        "r",
        HandlerKind::DeadLetter(DeadLetter {
            endpoint: dead,
            uri: "mock:dead".into(),
            use_original_message: true,
            use_original_body: false,
            handle_new_exception: true,
        }),
        RedeliveryPolicy::default(),
    ));
    assert!(h.keeps_original());
    let change = BoxProcessor::sync(|mut ex: Exchange| {
        ex.message.body = Body::from("changed");
        Ok(ex)
    });
    let (fail, _) = flaky(u32::MAX, CamelError::processor("boom"));
    let route = keep_original(crate::pipeline::pipeline(vec![
        h.wrap(change, "a"),
        h.wrap(fail, "b"),
    ]));
    route.process(Exchange::new("first")).await.unwrap();
    assert_eq!(letters.lock().unwrap()[0].message.body, Body::from("first"));
}

#[tokio::test(start_paused = true)]
async fn a_failing_dead_letter_endpoint_fails_the_exchange_when_asked() {
    let broken = BoxProcessor::sync(|_| Err(CamelError::processor("dead letter down")));
    let h = Arc::new(ErrorHandler::new(
        "r",
        HandlerKind::DeadLetter(DeadLetter {
            endpoint: broken,
            uri: "mock:dead".into(),
            use_original_message: false,
            use_original_body: false,
            handle_new_exception: false,
        }),
        RedeliveryPolicy::default(),
    ));
    let (step, _) = flaky(u32::MAX, CamelError::processor("boom"));
    let out = h.wrap(step, "s").process(Exchange::default()).await;
    assert_eq!(out.unwrap_err().to_string(), "dead letter down");
}

#[tokio::test(start_paused = true)]
async fn as_a_tower_layer() {
    use tower::{Layer, ServiceExt};
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 2,
        redelivery_delay: Duration::from_millis(10),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", HandlerKind::Default, policy));
    let (step, calls) = flaky(2, CamelError::processor("boom"));
    let svc = ErrorHandlerLayer::new(h, "s").layer(step);
    svc.oneshot(Exchange::default()).await.unwrap();
    assert_eq!(gaps(&calls.lock().unwrap()), [10, 10]);
}

/// An in-place step (as `set_header` is) behind the handler inside a pipeline: it runs
/// without a copy of its input, and its failures still reach redelivery and the dead
/// letter channel with the exchange the earlier steps built.
#[tokio::test(start_paused = true)]
async fn in_place_steps_are_redelivered_and_dead_lettered_without_a_copy() {
    let calls = Arc::new(Mutex::new(0u32));
    let seen = calls.clone();
    let flaky_in_place = BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        let mut c = seen.lock().unwrap();
        *c += 1;
        if *c <= 2 {
            return Err(CamelError::processor("not yet"));
        }
        ex.message.headers.insert("tagged", i64::from(*c));
        Ok(())
    });
    let tag = BoxProcessor::sync_in_place(|ex: &mut Exchange| {
        ex.message.headers.insert("first", true);
        Ok(())
    });
    let (dead, letters) = mailbox();
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 2,
        redelivery_delay: Duration::from_millis(10),
        ..Default::default()
    };
    let h = Arc::new(ErrorHandler::new("r", dead_letter(dead), policy));
    let route = crate::pipeline::pipeline(vec![
        h.wrap(tag.clone(), "steps[0]"),
        h.wrap(flaky_in_place, "steps[1]"),
    ]);
    let out = route.process(Exchange::new("x")).await.unwrap();
    assert_eq!(
        *calls.lock().unwrap(),
        3,
        "two failures, then the redelivery succeeds"
    );
    assert_eq!(out.header("tagged"), Some(&3i64.into()));
    assert_eq!(out.header("first"), Some(&true.into()));
    assert_eq!(out.header(names::REDELIVERY_COUNTER), Some(&2i64.into()));

    // Always failing: the dead letter gets the exchange with the first step's header.
    let never = BoxProcessor::sync_in_place(|_: &mut Exchange| Err(CamelError::processor("no")));
    let route = crate::pipeline::pipeline(vec![h.wrap(tag, "steps[0]"), h.wrap(never, "steps[1]")]);
    let out = route.process(Exchange::new("y")).await.unwrap();
    assert!(out.is_stopped());
    let letters = letters.lock().unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].header("first"), Some(&true.into()));
    assert_eq!(
        letters[0].property(names::FAILURE_ENDPOINT),
        Some(&"steps[1]".into())
    );
}

/// A split of "a,b,c" behind `handler` as the compiler builds it (ADR 0092): the step
/// redelivers alone, the part's channel handles, the split's channel lets a handled part's
/// failure through. Returns the split's outcome and how many times `step` ran.
async fn split_behind(handler: &Arc<ErrorHandler>) -> (Result<Exchange, CamelError>, usize) {
    use crate::split::{Split, SplitExpression, SplitOptions};
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let step = BoxProcessor::sync(move |ex: Exchange| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match ex.message.body.as_text().as_deref() {
            Some("b") => Err(CamelError::processor("boom")),
            _ => Ok(ex),
        }
    });
    let part = handler.wrap_as(
        step,
        "steps[0].split.steps[0].process",
        ChannelRole::RedeliverOnly,
    );
    let part = handler.wrap_as(part, "steps[0].split", ChannelRole::Part);
    let tokens = camel_language::Tokenizer::new(",", false).unwrap();
    let mut options = SplitOptions::new(SplitExpression::Tokenize(tokens));
    options.correlate = true;
    let split = Split::new(options, part);
    let split = handler.wrap_as(
        split.into_processor(),
        "steps[0].split",
        ChannelRole::FanOut,
    );
    let out = split.process(Exchange::new("a,b,c")).await;
    (out, calls.load(std::sync::atomic::Ordering::SeqCst))
}

fn marks_left(handler: &ErrorHandler) -> usize {
    handler.exhausted_inside.lock().unwrap().len() + handler.failed_parts.lock().unwrap().len()
}

#[tokio::test(start_paused = true)]
async fn a_failed_split_part_is_handled_once_and_leaves_no_mark() {
    let policy = RedeliveryPolicy {
        maximum_redeliveries: 2,
        redelivery_delay: Duration::from_millis(10),
        ..Default::default()
    };
    let handler = Arc::new(ErrorHandler::new("r", HandlerKind::Default, policy.clone()));
    let (out, calls) = split_behind(&handler).await;
    assert!(out.is_err(), "the default handler fails the split");
    assert_eq!(calls, 1 + 3 + 1, "b redelivered alone, the split not again");
    assert_eq!(marks_left(&handler), 0);

    let (dead, letters) = mailbox();
    let handler = Arc::new(ErrorHandler::new("r", dead_letter(dead), policy));
    let (out, calls) = split_behind(&handler).await;
    assert!(out.is_ok(), "the part is dead-lettered, the split goes on");
    assert_eq!(calls, 1 + 3 + 1);
    let letters = letters.lock().unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].message.body, Body::from("b"));
    assert_eq!(marks_left(&handler), 0);
}
