//! The batcher's metrics: names, labels and values, read through a recorder local to
//! the test's thread (the runtime is current-thread, so the batcher's tasks record
//! there too).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::CamelError;
use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};

use super::{config, judged, options, rig, settle, Rig};
use crate::batcher::{BatchConfig, BatcherRegistry};
use crate::memory::{MemoryCodec, Verdict};
use crate::SinkProducer;

/// Sums of every metric, keyed `name{label=value,…}`.
type Sums = Arc<Mutex<HashMap<String, f64>>>;

#[derive(Debug, Default)]
struct SumRecorder {
    sums: Sums,
}

#[derive(Debug)]
struct Cell {
    key: String,
    sums: Sums,
}

impl Cell {
    fn add(&self, v: f64) {
        *self
            .sums
            .lock()
            .unwrap()
            .entry(self.key.clone())
            .or_default() += v;
    }
    fn set(&self, v: f64) {
        self.sums.lock().unwrap().insert(self.key.clone(), v);
    }
}

impl CounterFn for Cell {
    fn increment(&self, v: u64) {
        self.add(v as f64);
    }
    fn absolute(&self, v: u64) {
        self.set(v as f64);
    }
}

impl GaugeFn for Cell {
    fn increment(&self, v: f64) {
        self.add(v);
    }
    fn decrement(&self, v: f64) {
        self.add(-v);
    }
    fn set(&self, v: f64) {
        Cell::set(self, v);
    }
}

impl HistogramFn for Cell {
    fn record(&self, v: f64) {
        self.add(v);
    }
}

impl SumRecorder {
    fn cell(&self, key: &Key) -> Arc<Cell> {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        Arc::new(Cell {
            key: format!("{}{{{}}}", key.name(), labels.join(",")),
            sums: self.sums.clone(),
        })
    }

    fn get(&self, prefix: &str) -> f64 {
        let sums = self.sums.lock().unwrap();
        sums.iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    }
}

impl Recorder for SumRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.cell(key))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key))
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.cell(key))
    }
}

#[test]
fn flushes_refusals_and_state_are_measured_with_safe_labels() {
    let recorder = SumRecorder::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let r = rig(judged("3", Verdict::RefuseRequest), config(10, 60_000));
            let calls: Vec<_> = (0..10).map(|i| r.send(&i.to_string(), None, "t")).collect();
            for call in calls {
                let _ = call.await;
            }
            // This one's registry is named: its metrics say which instance they are of.
            let codec = MemoryCodec::new("full");
            let registry = BatcherRegistry::with_instance("edge");
            let c = BatchConfig {
                queue_max: 1,
                ..config(10, 60_000)
            };
            let full = Rig {
                log: codec.log(),
                producer: SinkProducer::new(codec, c, options(), registry.clone()),
                registry,
            };
            let held = full.send("a", None, "t");
            settle().await;
            assert_eq!(
                recorder.get("camel_sink_batch_queued_entries{sink=memory:full"),
                1.0
            );
            let refused = full.send("b", None, "t").await.unwrap();
            assert!(
                matches!(refused, Err(CamelError::RetryAfter { .. })),
                "{refused:?}"
            );
            full.registry.shutdown().await;
            held.await.unwrap().unwrap();
            let g = rig(MemoryCodec::new("other").gated(), config(1, 0));
            let held = g.send("a", None, "t");
            g.log.wait_requests(1).await;
            settle().await;
            let in_flight = "camel_sink_batch_requests_in_flight{sink=memory:other";
            assert_eq!(recorder.get(in_flight), 1.0);
            g.log.release(1);
            held.await.unwrap().unwrap();
            settle().await;
            assert_eq!(recorder.get(in_flight), 0.0);
            // "d" and "other" are running; "full" was shut down.
            assert_eq!(recorder.get("camel_sink_batchers"), 2.0);
            tokio::time::advance(Duration::from_secs(61)).await;
            settle().await;
        });
    });
    let sums = recorder.sums.lock().unwrap().clone();
    let label = sums
        .keys()
        .find(|k| k.starts_with("camel_sink_batch_flush_entries{sink=memory:d#"))
        .cloned();
    assert!(label.is_some(), "{sums:?}");
    assert_eq!(
        recorder.get("camel_sink_batch_flush_entries{sink=memory:d#"),
        10.0
    );
    assert_eq!(
        recorder.get("camel_sink_batch_flush_requests{sink=memory:d#"),
        9.0
    );
    assert_eq!(
        recorder.get("camel_sink_batch_flush_bisections{sink=memory:d#"),
        8.0
    );
    assert!(recorder.get("camel_sink_batch_flush_bytes{sink=memory:d#") > 0.0);
    assert!(sums.contains_key(&format!(
        "camel_sink_batch_flush_duration_seconds{{{}",
        &label.unwrap()["camel_sink_batch_flush_entries{".len()..]
    )));
    assert_eq!(
        recorder.get("camel_sink_batch_refused_total{sink=memory:full#"),
        1.0
    );
    assert!(sums.keys().any(|k| k.contains("reason=entries")));
    // Every flush and refusal metric names its registry's instance.
    for (name, instance) in [
        (
            "camel_sink_batch_flush_entries{sink=memory:d#",
            "instance=default",
        ),
        (
            "camel_sink_batch_refused_total{sink=memory:full#",
            "instance=edge",
        ),
    ] {
        let keys: Vec<&String> = sums.keys().filter(|k| k.starts_with(name)).collect();
        assert!(!keys.is_empty(), "{name}: {sums:?}");
        assert!(keys.iter().all(|k| k.contains(instance)), "{keys:?}");
    }
    // Both went idle and stopped.
    assert_eq!(recorder.get("camel_sink_batchers"), 0.0);
    assert_eq!(
        recorder.get("camel_sink_batch_queued_entries{sink=memory:other"),
        0.0
    );
}
