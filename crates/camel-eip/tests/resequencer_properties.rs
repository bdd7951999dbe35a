//! Ordering and no-loss invariants of the resequencer, over random inputs.

mod resequencer_support;

use std::collections::HashSet;
use std::time::Duration;

use camel_api::ShutdownReason;
use camel_eip::resequencer::{CapacityPolicy, GapPolicy, ResequenceConfig, ResequenceMode};
use proptest::prelude::*;
use rand::{seq::SliceRandom, Rng, SeedableRng};
use resequencer_support::*;

const CAPACITY: usize = 64;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any permutation of 1..n shuffled within windows no larger than the capacity comes
    /// out of stream mode as exactly 1..n — before any gap timer fires.
    #[test]
    fn stream_restores_windowed_permutations(
        n in 1u64..400,
        window in 1usize..=CAPACITY,
        seed in any::<u64>(),
        initial_known in any::<bool>(),
    ) {
        let input = shuffled_in_windows(n, window, seed);
        let rec = Recorder::default();
        paused_runtime().block_on(async {
            let initial = initial_known.then_some(1);
            let r = build(&stream_config(initial, CAPACITY, 1000), rec.processor(), None);
            r.lifecycle.start().await.unwrap();
            for &s in &input {
                r.processor.process(ex(s)).await.unwrap();
            }
            // With the first number known everything leaves before the 1 s gap timeout;
            // without it, the first number is decided when that timeout expires.
            let deadline = if initial_known { 500 } else { 1500 };
            tokio::time::timeout(Duration::from_millis(deadline), rec.wait_for(n as usize))
                .await
                .expect("delivered without waiting for a gap");
            r.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
        });
        prop_assert_eq!(rec.seqs(), (1..=n as i64).collect::<Vec<_>>());
    }

    /// Batch mode releases every batch sorted numerically, and nothing is lost.
    #[test]
    fn batch_releases_sorted_batches(
        keys in proptest::collection::vec(0u32..2000, 1..300),
        size in 1usize..40,
    ) {
        let rec = Recorder::default();
        paused_runtime().block_on(async {
            let mut cfg = ResequenceConfig::batch("${header.seq}");
            if let ResequenceMode::Batch(b) = &mut cfg.mode {
                b.size = size;
                b.allow_duplicates = true;
            }
            let r = build(&cfg, rec.processor(), None);
            r.lifecycle.start().await.unwrap();
            for &k in &keys {
                // As text, so a lexical sort would put "10" before "9".
                let exchange = camel_api::Exchange::default().with_header("seq", k.to_string());
                r.processor.process(exchange).await.unwrap();
            }
            r.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
        });
        let out = rec.seqs();
        prop_assert_eq!(out.len(), keys.len());
        for (batch_in, batch_out) in keys.chunks(size).zip(out.chunks(size)) {
            let mut expected: Vec<i64> = batch_in.iter().map(|&k| k.into()).collect();
            expected.sort_unstable();
            prop_assert_eq!(batch_out, expected.as_slice());
        }
    }

    /// With duplicates and `dedup`, nothing is emitted twice and nothing is missing.
    #[test]
    fn dedup_never_emits_twice(
        n in 1u64..300,
        window in 1usize..=CAPACITY / 2,
        seed in any::<u64>(),
    ) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut input = Vec::new();
        for chunk in shuffled_in_windows(n, window, seed).chunks(window) {
            let mut copies: Vec<u64> =
                chunk.iter().flat_map(|&s| vec![s; rng.gen_range(1..=2)]).collect();
            copies.shuffle(&mut rng);
            input.extend(copies);
        }
        let rec = Recorder::default();
        paused_runtime().block_on(async {
            let mut cfg = stream_config(Some(1), CAPACITY, 1000);
            stream_mut(&mut cfg).dedup = true;
            let r = build(&cfg, rec.processor(), None);
            r.lifecycle.start().await.unwrap();
            for &s in &input {
                r.processor.process(ex(s)).await.unwrap();
            }
            r.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
        });
        prop_assert_eq!(rec.seqs(), (1..=n as i64).collect::<Vec<_>>());
    }

    /// Random gaps and pauses: what is delivered is strictly increasing, and every
    /// accepted exchange is delivered or dead-lettered exactly once (gaps, a full
    /// resequencer and late numbers all dead-letter here).
    #[test]
    fn gaps_keep_order_and_lose_nothing(
        n in 1u64..300,
        window in 1usize..=16,
        seed in any::<u64>(),
        missing_percent in 0u32..30,
        dead_letter_gaps in any::<bool>(),
    ) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
        let input: Vec<u64> = shuffled_in_windows(n, window, seed)
            .into_iter()
            .filter(|_| rng.gen_range(0..100) >= missing_percent)
            .collect();
        let (delivered, dead) = (Recorder::default(), Recorder::default());
        let mut accepted = Vec::new();
        paused_runtime().block_on(async {
            let mut cfg = stream_config(Some(1), CAPACITY, 100);
            let s = stream_mut(&mut cfg);
            s.reject_old = true;
            // A long gap can fill the resequencer; a full one dead-letters too.
            s.on_capacity = CapacityPolicy::DeadLetter;
            s.on_gap = if dead_letter_gaps { GapPolicy::DeadLetter } else { GapPolicy::EmitPartial };
            cfg.dead_letter_uri = Some("mock:dead".into());
            let r = build(&cfg, delivered.processor(), Some(dead.processor()));
            r.lifecycle.start().await.unwrap();
            for &s in &input {
                if rng.gen_range(0..10) == 0 {
                    tokio::time::advance(Duration::from_millis(rng.gen_range(0..250))).await;
                }
                // A refusal (reject_old) means "not accepted": the caller knows.
                if r.processor.process(ex(s)).await.is_ok() {
                    accepted.push(s as i64);
                }
                if rng.gen_range(0..4) == 0 {
                    // Let the actor catch up sometimes, so gaps also expire mid-stream.
                    tokio::task::yield_now().await;
                }
            }
            r.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
        });
        let out = delivered.seqs();
        prop_assert!(out.windows(2).all(|w| w[0] < w[1]), "not increasing: {:?}", out);
        let mut all: Vec<i64> = out.iter().chain(dead.seqs().iter()).copied().collect();
        let unique: HashSet<i64> = all.iter().copied().collect();
        prop_assert_eq!(unique.len(), all.len(), "something went out twice");
        all.sort_unstable();
        accepted.sort_unstable();
        prop_assert_eq!(all, accepted);
    }
}
