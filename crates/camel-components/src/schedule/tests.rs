use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::{BoxProcessor, Component, ConsumerContext, Exchange, Value};
use tokio::time::Instant;

use super::{CronComponent, QuartzComponent, TokioClock};
use crate::testing::endpoint;

/// 2026-03-02T10:00:00.250Z: a quarter second past a whole second.
fn wall_start() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_772_445_600_250)
}

/// Each exchange with the paused-time milliseconds since the test started.
type Seen = Arc<Mutex<Vec<(u128, Exchange)>>>;

/// Runs the consumer of `uri` until `n` exchanges completed; the first exchange takes
/// `first_takes`.
async fn run(component: &dyn Component, uri: &str, n: u64, first_takes: Duration) -> Seen {
    let start = Instant::now();
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let sink = sink.clone();
        async move {
            let first = {
                let mut seen = sink.lock().unwrap();
                seen.push((start.elapsed().as_millis(), ex.clone()));
                seen.len() == 1
            };
            if first {
                tokio::time::sleep(first_takes).await;
            }
            Ok(ex)
        }
    });
    let ep = endpoint(component, uri).unwrap();
    let ctx = ConsumerContext::for_pipeline("cron", pipeline);
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    ctx.stats().wait_for(n).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    seen
}

fn instants(seen: &Seen, n: usize) -> Vec<u128> {
    seen.lock()
        .unwrap()
        .iter()
        .take(n)
        .map(|(t, _)| *t)
        .collect()
}

fn header(ex: &Exchange, name: &str) -> Option<i64> {
    ex.header(name).and_then(Value::as_i64)
}

fn wall_ms(offset_ms: i64) -> i64 {
    1_772_445_600_250 + offset_ms
}

fn cron() -> CronComponent {
    CronComponent::with_clock(Arc::new(TokioClock::starting_at(wall_start())))
}

fn quartz() -> QuartzComponent {
    QuartzComponent::with_clock(Arc::new(TokioClock::starting_at(wall_start())))
}

#[tokio::test(start_paused = true)]
async fn every_two_seconds_fires_on_the_even_seconds() {
    let seen = run(
        &cron(),
        "cron:tick?schedule=0/2+*+*+*+*+?",
        3,
        Duration::ZERO,
    )
    .await;
    // 10:00:02, :04, :06 on the wall clock, which started at 10:00:00.250.
    assert_eq!(instants(&seen, 3), [1750, 3750, 5750]);
    let seen = seen.lock().unwrap();
    let (_, second) = &seen[1];
    assert_eq!(header(second, "scheduledFireTime"), Some(wall_ms(3750)));
    assert_eq!(header(second, "fireTime"), Some(wall_ms(3750)));
    assert_eq!(header(second, "previousFireTime"), Some(wall_ms(1750)));
    assert_eq!(header(second, "nextFireTime"), Some(wall_ms(5750)));
    assert_eq!(second.header("triggerName").unwrap().to_string(), "tick");
    assert!(header(&seen[0].1, "previousFireTime").is_none());
}

#[tokio::test(start_paused = true)]
async fn spaces_in_a_yaml_parameter_work_as_well_as_plus() {
    let uri = camel_api::EndpointUri::parse("cron:tick")
        .unwrap()
        .with_parameters([("schedule", "*/5 * * * * ?".to_string())]);
    let ep = cron().endpoint(uri, &crate::BareContext).unwrap();
    let ctx = ConsumerContext::for_pipeline("cron", BoxProcessor::identity());
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    let start = Instant::now();
    ctx.stats().wait_for(2).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(9750));
}

#[tokio::test(start_paused = true)]
async fn quartz_names_group_and_trigger_and_waits_its_start_delay() {
    let seen = run(
        &quartz(),
        "quartz:reports/nightly?cron=*+*+*+*+*+?",
        2,
        Duration::ZERO,
    )
    .await;
    // Every second; the default 500 ms start delay skips 10:00:00.750 → first is :01.
    assert_eq!(instants(&seen, 2), [750, 1750]);
    {
        let seen = seen.lock().unwrap();
        let (_, first) = &seen[0];
        assert_eq!(first.header("triggerGroup").unwrap().to_string(), "reports");
        assert_eq!(first.header("triggerName").unwrap().to_string(), "nightly");
    }

    let seen = run(
        &quartz(),
        "quartz:solo?cron=*+*+*+*+*+?&triggerStartDelay=0",
        1,
        Duration::ZERO,
    )
    .await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, 750);
    assert_eq!(
        seen[0].1.header("triggerGroup").unwrap().to_string(),
        "Camel"
    );
}

#[tokio::test(start_paused = true)]
async fn firings_missed_by_a_slow_exchange_fold_into_one() {
    // The first exchange (at :02) takes 5 s: :04 and :06 are missed, one firing at once
    // for them (scheduled :06), then :08 on time.
    let seen = run(
        &cron(),
        "cron:slow?schedule=0/2+*+*+*+*+?",
        3,
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(instants(&seen, 3), [1750, 6750, 7750]);
    let seen = seen.lock().unwrap();
    assert_eq!(header(&seen[1].1, "scheduledFireTime"), Some(wall_ms(5750)));
}

#[tokio::test(start_paused = true)]
async fn a_fixed_offset_time_zone_shifts_the_schedule() {
    // 10:00:00.250 UTC is 11:00:00.250 at +01:00; at 11:00:03 there.
    let seen = run(
        &quartz(),
        "quartz:tz?cron=3+0+11+*+*+?&trigger.timeZone=%2B01:00&triggerStartDelay=0",
        1,
        Duration::ZERO,
    )
    .await;
    assert_eq!(instants(&seen, 1), [2750]);
}

#[test]
fn bad_input_names_the_option_and_why() {
    let cron = CronComponent::new();
    let quartz = QuartzComponent::new();
    let cases: [(&dyn Component, &str, &[&str]); 8] = [
        (
            &cron,
            "cron:t?schedule=0+0+12+*",
            &["`schedule`", "6 or 7 fields"],
        ),
        (
            &cron,
            "cron:t?schedule=0+99+*+*+*+?",
            &["`schedule`", "invalid cron expression"],
        ),
        (&cron, "cron:t", &["`schedule` is required"]),
        (
            &cron,
            "cron:t?schedule=*+*+*+*+*+?&shedule=1",
            &["did you mean `schedule`"],
        ),
        (
            &quartz,
            "quartz:g/t?cron=0+0+12+1+*+2",
            &["`cron`", "put `?` in one"],
        ),
        (&quartz, "quartz:g/t", &["needs `cron`", "timer:"]),
        (
            &quartz,
            "quartz:g/t?cron=*+*+*+*+*+?&trigger.timeZone=Europe/Stockholm",
            &["`trigger.time_zone`", "Europe/Stockholm", "fixed offset"],
        ),
        (&quartz, "quartz:g/t/x?cron=*+*+*+*+*+?", &["[group/]name"]),
    ];
    for (component, uri, needles) in cases {
        let err = endpoint(component, uri).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, camel_api::CamelError::InvalidUri { .. }),
            "{uri}: {err:?}"
        );
        for needle in needles {
            assert!(text.contains(needle), "{uri}: {text}");
        }
    }
    let ep = endpoint(&cron, "cron:t?schedule=*+*+*+*+*+?").unwrap();
    assert!(ep.producer().is_err());
}

#[tokio::test(start_paused = true)]
async fn a_suspended_route_gets_the_waiting_firing_and_one_for_all_it_missed() {
    let start = Instant::now();
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock()
            .unwrap()
            .push((start.elapsed().as_millis(), ex.clone()));
        Ok(ex)
    });
    let ep = endpoint(&cron(), "cron:t?schedule=0/2+*+*+*+*+?").unwrap();
    let ctx = ConsumerContext::for_pipeline("cron", pipeline);
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    ctx.stats().wait_for(1).await; // 1750 ms
    ctx.gate().pause();
    // Suspended from 1750 to 11750: firings due at 3750 … 11750 are missed.
    tokio::time::sleep(Duration::from_secs(10)).await;
    ctx.gate().resume();
    ctx.stats().wait_for(4).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    let seen = seen.lock().unwrap();
    let at: Vec<(u128, Option<i64>)> = seen
        .iter()
        .take(4)
        .map(|(t, ex)| (*t, header(ex, "scheduledFireTime")))
        .collect();
    assert_eq!(
        at,
        [
            (1750, Some(wall_ms(1750))),
            // The firing that waited at the gate since 3750 …
            (11750, Some(wall_ms(3750))),
            // … then one for everything missed since, at once …
            (11750, Some(wall_ms(11750))),
            // … and back on schedule.
            (13750, Some(wall_ms(13750))),
        ]
    );
}

#[test]
fn a_five_field_cron_schedule_leaves_the_seconds_out_as_in_camel() {
    let cron = CronComponent::new();
    let uri = camel_api::EndpointUri::parse("cron:tab?schedule=*+*+*+*+?").unwrap();
    assert!(cron.endpoint(uri, &crate::BareContext).is_ok());
    // Quartz's own endpoint keeps its six or seven.
    let quartz = QuartzComponent::new();
    let uri = camel_api::EndpointUri::parse("quartz:g/n?cron=*+*+*+*+?").unwrap();
    let err = quartz
        .endpoint(uri, &crate::BareContext)
        .unwrap_err()
        .to_string();
    assert!(err.contains("6 or 7 fields"), "{err}");
}
