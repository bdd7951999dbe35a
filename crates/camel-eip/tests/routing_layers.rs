//! The routing EIPs as tower layers over a hand-made resolver, and the wire tap under a
//! flood (ADRs 0060, 0061).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::{
    Body, BoxProcessor, CamelError, Endpoint, Exchange, ProcessorFuture, ShutdownReason,
};
use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
use camel_eip::recipient_list::{RecipientList, RecipientListOptions};
use camel_eip::wire_tap::{WireTap, WireTapOptions};
use tokio::sync::Semaphore;
use tower::{service_fn, Service, ServiceBuilder, ServiceExt};

/// `slow:*` endpoints wait for a permit of `gate`; others answer at once with their URI.
#[derive(Debug)]
struct Endpoints {
    gate: Arc<Semaphore>,
    received: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct Ep {
    uri: String,
    gate: Arc<Semaphore>,
    received: Arc<AtomicUsize>,
}

impl Endpoint for Ep {
    fn uri(&self) -> &str {
        &self.uri
    }
    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let (uri, gate, received) = (self.uri.clone(), self.gate.clone(), self.received.clone());
        Ok(BoxProcessor::from_fn(move |mut ex: Exchange| {
            let (uri, gate, received) = (uri.clone(), gate.clone(), received.clone());
            async move {
                if uri.starts_with("slow:") {
                    let _permit = gate.acquire().await.map_err(CamelError::processor)?;
                }
                received.fetch_add(1, Ordering::SeqCst);
                ex.message.body = Body::from(uri);
                Ok(ex)
            }
        }))
    }
}

impl EndpointResolver for Endpoints {
    fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
        Ok(Arc::new(Ep {
            uri: uri.to_string(),
            gate: self.gate.clone(),
            received: self.received.clone(),
        }))
    }
}

fn endpoints() -> (Arc<Endpoints>, Arc<Semaphore>, Arc<AtomicUsize>) {
    let gate = Arc::new(Semaphore::new(0));
    let received = Arc::new(AtomicUsize::new(0));
    let e = Arc::new(Endpoints {
        gate: gate.clone(),
        received: received.clone(),
    });
    (e, gate, received)
}

#[tokio::test]
async fn a_flooded_wire_tap_drops_and_counts_copies_and_never_holds_the_main_exchange() {
    let (resolver, gate, received) = endpoints();
    let cache = Arc::new(EndpointCache::producers(resolver, CacheSize::default()));
    let options = WireTapOptions {
        queue_size: 8,
        concurrency: 2,
        ..Default::default()
    };
    let tap = WireTap::new(camel_language::constant("slow:audit"), cache, None, options);
    let counters = tap.counters();
    let lifecycle = tap.lifecycle();
    let step = tap.into_processor();
    const FLOOD: u64 = 10_000;
    for i in 0..FLOOD {
        // The main path completes synchronously: no wait on the tap, whatever its state.
        match step.process(Exchange::new(format!("m{i}"))) {
            ProcessorFuture::Ready(Some(Ok(ex))) => {
                assert_eq!(ex.message.body, Body::from(format!("m{i}")))
            }
            _ => panic!("the wire tap made the main exchange wait"),
        }
        if i % 1000 == 0 {
            tokio::task::yield_now().await; // let the tap's task take what it can
        }
    }
    // At most queue_size waiting plus `concurrency` being sent: the rest were dropped.
    let dropped = counters.dropped();
    assert!(dropped >= FLOOD - 8 - 2, "dropped {dropped}");
    assert!(dropped < FLOOD);
    assert_eq!(
        received.load(Ordering::SeqCst),
        0,
        "the tap endpoint is stuck"
    );
    // The endpoint recovers; stopping drains what was queued.
    gate.add_permits(1_000);
    lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
    assert_eq!(counters.delivered(), FLOOD - dropped);
    assert_eq!(received.load(Ordering::SeqCst) as u64, FLOOD - dropped);
    // After the stop, taps are dropped and counted, the main path still answers.
    assert!(step.process(Exchange::new("late")).await.is_ok());
    assert_eq!(counters.dropped(), dropped + 1);
}

#[tokio::test]
async fn recipient_list_and_wire_tap_compose_as_tower_layers() {
    let (resolver, _gate, received) = endpoints();
    let cache = Arc::new(EndpointCache::producers(resolver, CacheSize::default()));
    let list = RecipientList::new(
        camel_language::simple("${header.to}").unwrap(),
        cache.clone(),
        camel_eip::aggregation::builtin("grouped_body"),
        RecipientListOptions {
            parallel: true,
            ..Default::default()
        },
    );
    let tap = WireTap::new(
        camel_language::constant("fast:tap"),
        cache,
        None,
        WireTapOptions::default(),
    );
    let lifecycle = tap.lifecycle();
    let mut svc = ServiceBuilder::new()
        .layer(tap.layer())
        .layer(list.layer())
        .service(service_fn(|mut ex: Exchange| async move {
            ex.message.headers.insert("seen", true);
            Ok::<_, CamelError>(ex)
        }));
    let out = svc
        .ready()
        .await
        .unwrap()
        .call(Exchange::new("x").with_header("to", "fast:a,fast:b"))
        .await
        .unwrap();
    assert_eq!(
        out.message.body,
        Body::from(serde_json::json!(["fast:a", "fast:b"]))
    );
    assert_eq!(out.message.headers.get("seen"), Some(&true.into()));
    lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
    assert_eq!(
        received.load(Ordering::SeqCst),
        3,
        "two recipients and one tap"
    );
}
