//! A group with a backlog behind its request in flight must not change how other
//! groups are batched (issue 18, item 7).

use std::time::Duration;

use super::{config, rig};
use crate::memory::MemoryCodec;

/// The `hot` group's requests take an hour; everything else is answered at once.
fn slow_hot_group() -> MemoryCodec {
    MemoryCodec::new("d").with_latency(|entries| {
        if entries.iter().any(|e| e.group.as_deref() == Some("hot")) {
            Duration::from_secs(3600)
        } else {
            Duration::ZERO
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_backlog_behind_a_request_in_flight_does_not_make_others_leave_alone() {
    let r = rig(slow_hot_group(), config(10, 10));
    let _hot: Vec<_> = (0..1000)
        .map(|i| r.send(&format!("hot{i}"), Some("hot"), "t"))
        .collect();
    r.log.wait_requests(1).await;
    let mut others = Vec::new();
    for i in 0..200 {
        others.push(r.send(&format!("o{i}"), None, "u"));
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    for o in others {
        o.await.unwrap().unwrap();
    }
    let requests = r.log.requests();
    assert_eq!(requests.len(), 21, "one of hot, twenty of the others");
    assert!(requests[0].iter().all(|k| k.starts_with("hot")));
    let sizes: Vec<usize> = requests[1..].iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![10; 20], "{requests:?}");
}
