//! Shared pieces of the resequencer integration tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};

use camel_api::{BoxProcessor, CamelError, Exchange, Expression, Value};
use camel_eip::resequencer::{
    names, ResequenceConfig, ResequenceExpressions, ResequenceMode, Resequencer,
    ResequencerService, StreamConfig,
};
use tokio::sync::Notify;

/// Reads one header: stands in for `simple("${header.NAME}")`.
#[derive(Debug)]
pub struct Header(pub &'static str);

impl Expression for Header {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header(self.0).cloned().unwrap_or_default())
    }
}

/// A recorded `seq` header and drop reason.
pub type Entry = (i64, Option<String>);

/// Records the `seq` header of every exchange it sees (and the drop reason, if any).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    seen: Arc<Mutex<Vec<Entry>>>,
    changed: Arc<Notify>,
}

impl Recorder {
    pub fn processor(&self) -> BoxProcessor {
        let me = self.clone();
        BoxProcessor::sync(move |ex: Exchange| {
            let seq = ex.header("seq").and_then(Value::as_i64).unwrap_or(-1);
            let reason = ex.property(names::DROP_REASON).map(|v| v.to_string());
            me.seen.lock().unwrap().push((seq, reason));
            me.changed.notify_waiters();
            Ok(ex)
        })
    }

    pub fn seqs(&self) -> Vec<i64> {
        self.seen.lock().unwrap().iter().map(|s| s.0).collect()
    }

    pub fn entries(&self) -> Vec<Entry> {
        self.seen.lock().unwrap().clone()
    }

    pub fn len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Waits, without polling a clock, until `n` exchanges were recorded.
    pub async fn wait_for(&self, n: usize) {
        loop {
            let changed = self.changed.notified();
            if self.len() >= n {
                return;
            }
            changed.await;
        }
    }
}

/// Stream configuration with `initial_sequence`, capacity and gap timeout set.
pub fn stream_config(initial: Option<u64>, capacity: usize, gap_ms: u64) -> ResequenceConfig {
    let mut cfg = ResequenceConfig::stream("${header.seq}");
    cfg.mode = ResequenceMode::Stream(StreamConfig {
        initial_sequence: initial,
        capacity,
        gap_timeout_ms: gap_ms,
        ..stream_of(&cfg).clone()
    });
    cfg
}

/// The stream options of `cfg` (panics for batch: a test bug).
pub fn stream_of(cfg: &ResequenceConfig) -> &StreamConfig {
    match &cfg.mode {
        ResequenceMode::Stream(s) => s,
        ResequenceMode::Batch(_) => panic!("stream config expected"),
    }
}

/// Mutable stream options of `cfg`.
pub fn stream_mut(cfg: &mut ResequenceConfig) -> &mut StreamConfig {
    match &mut cfg.mode {
        ResequenceMode::Stream(s) => s,
        ResequenceMode::Batch(_) => panic!("stream config expected"),
    }
}

/// Builds a resequencer keyed by the `seq` header (`corr` header for batch correlation).
pub fn build(
    cfg: &ResequenceConfig,
    continuation: BoxProcessor,
    dead_letter: Option<BoxProcessor>,
) -> Resequencer {
    build_for_route("route-1", cfg, continuation, dead_letter)
}

/// Like [`build`], for route `route_id`.
pub fn build_for_route(
    route_id: &str,
    cfg: &ResequenceConfig,
    continuation: BoxProcessor,
    dead_letter: Option<BoxProcessor>,
) -> Resequencer {
    let correlation = match &cfg.mode {
        ResequenceMode::Batch(b) if b.correlation.is_some() => {
            Some(Arc::new(Header("corr")) as Arc<dyn Expression>)
        }
        _ => None,
    };
    let expressions = ResequenceExpressions {
        key: Arc::new(Header("seq")),
        correlation,
    };
    ResequencerService::build_with(
        cfg,
        expressions,
        route_id,
        "resequence",
        continuation,
        dead_letter,
    )
    .expect("valid test configuration")
}

/// An exchange with `seq` set.
pub fn ex(seq: u64) -> Exchange {
    Exchange::default().with_header("seq", seq)
}

/// `1..=n` shuffled within consecutive windows of `window`, deterministically from `seed`.
pub fn shuffled_in_windows(n: u64, window: usize, seed: u64) -> Vec<u64> {
    use rand::{seq::SliceRandom, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut all: Vec<u64> = (1..=n).collect();
    for chunk in all.chunks_mut(window.max(1)) {
        chunk.shuffle(&mut rng);
    }
    all
}

/// A paused-clock current-thread runtime for property tests.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime")
}
