use super::*;

fn row(id: i64, group: Option<&str>) -> StoredMessage {
    StoredMessage {
        id,
        partition: 0,
        group_key: group.map(str::to_string),
        headers: serde_json::Map::new(),
        payload: bytes::Bytes::new(),
        kind: crate::message::PayloadKind::Bytes,
        attempts: 0,
        retry_at_ms: None,
        created_at_ms: 0,
    }
}

fn drain(s: &mut Scheduler) -> Vec<i64> {
    std::iter::from_fn(|| s.next_dispatch(0))
        .map(|m| m.id)
        .collect()
}

#[test]
fn one_in_flight_per_group_others_concurrent() {
    let mut s = Scheduler::new(Ordering::Group, 64, 100);
    s.accept(
        vec![
            row(1, Some("a")),
            row(2, Some("b")),
            row(3, Some("a")),
            row(4, None),
        ],
        0,
    );
    let mut out = drain(&mut s);
    out.sort();
    assert_eq!(out, vec![1, 2, 4]);
    assert_eq!(s.in_flight(), 3);
    s.on_success(1);
    assert_eq!(drain(&mut s), vec![3]);
    assert_eq!(s.take_deletes(), vec![1]);
}

#[test]
fn max_inflight_bounds_dispatch() {
    let mut s = Scheduler::new(Ordering::Group, 2, 100);
    s.accept(
        (1..=5)
            .map(|i| row(i, Some(&format!("g{i}"))))
            .collect::<Vec<_>>(),
        0,
    );
    assert_eq!(drain(&mut s).len(), 2);
    s.on_success(1);
    assert_eq!(drain(&mut s).len(), 1);
}

#[test]
fn failure_blocks_its_group_until_due_then_rereads_from_the_head() {
    let mut s = Scheduler::new(Ordering::Group, 64, 100);
    s.accept(
        vec![row(1, Some("a")), row(2, Some("b")), row(3, Some("a"))],
        0,
    );
    assert_eq!(drain(&mut s), vec![1, 2]);
    s.on_failure(1, 1_000);
    assert_eq!(s.exclusion(), Exclusion::Groups(vec!["a".into()]));
    // Later rows of `a` stay out, even from a sweep; `b` flows.
    s.accept(
        vec![row(3, Some("a")), row(5, Some("a")), row(6, Some("b"))],
        10,
    );
    s.on_success(2);
    assert_eq!(drain(&mut s), vec![6]);
    assert_eq!(s.next_fetch(), None);
    assert_eq!(s.next_due(), Some(1_000));
    s.fire_due(999);
    assert_eq!(s.next_fetch(), None);
    s.fire_due(1_000);
    let fetch = s.next_fetch().expect("a catch-up read of group a");
    assert_eq!(
        fetch,
        Fetch::Group {
            key: "a".into(),
            filter: Some("a".into()),
            from: 1
        }
    );
    s.on_fetched(
        &fetch,
        vec![row(1, Some("a")), row(3, Some("a"))],
        true,
        1_000,
    );
    assert_eq!(drain(&mut s), vec![1]);
    s.on_success(1);
    assert_eq!(drain(&mut s), vec![3]);
}

#[test]
fn a_long_group_overflows_into_catch_up_reads() {
    let mut s = Scheduler::new(Ordering::Group, 64, 2);
    s.accept((1..=5).map(|i| row(i, Some("a"))).collect::<Vec<_>>(), 0);
    assert_eq!(s.exclusion(), Exclusion::Groups(vec!["a".into()]));
    assert_eq!(drain(&mut s), vec![1]);
    s.on_success(1);
    assert_eq!(drain(&mut s), vec![2]);
    s.on_success(2);
    let fetch = s.next_fetch().expect("catch-up");
    assert_eq!(
        fetch,
        Fetch::Group {
            key: "a".into(),
            filter: Some("a".into()),
            from: 3
        }
    );
    s.on_fetched(&fetch, vec![row(3, Some("a")), row(4, Some("a"))], false, 0);
    assert_eq!(drain(&mut s), vec![3]);
}

#[test]
fn restart_honours_a_stored_retry_time_of_a_head() {
    let mut s = Scheduler::new(Ordering::Group, 64, 100);
    let mut head = row(1, Some("a"));
    head.retry_at_ms = Some(500);
    s.accept(vec![head, row(2, Some("a")), row(3, Some("b"))], 0);
    assert_eq!(drain(&mut s), vec![3]);
    assert_eq!(s.next_due(), Some(500));
}

#[test]
fn unordered_failure_delays_only_that_message() {
    let mut s = Scheduler::new(Ordering::None, 64, 100);
    s.accept(vec![row(1, Some("a")), row(2, Some("a"))], 0);
    assert_eq!(drain(&mut s), vec![1, 2]);
    s.on_failure(1, 50);
    s.on_success(2);
    s.fire_due(50);
    let fetch = s.next_fetch().expect("single re-read");
    assert_eq!(fetch, Fetch::Single(1));
    s.on_fetched(&fetch, vec![row(1, Some("a"))], true, 50);
    assert_eq!(drain(&mut s), vec![1]);
}

#[test]
fn total_mode_has_one_message_in_flight_and_stops_behind_a_failure() {
    let mut s = Scheduler::new(Ordering::Total, 1, 100);
    s.accept(vec![row(1, Some("a")), row(2, Some("b")), row(3, None)], 0);
    assert_eq!(drain(&mut s), vec![1]);
    s.on_failure(1, 100);
    assert_eq!(drain(&mut s), Vec::<i64>::new());
    assert_eq!(s.exclusion(), Exclusion::All);
}

#[test]
fn memory_bound_pauses_the_scan() {
    let mut s = Scheduler::new(Ordering::Group, 1, 2);
    s.accept(
        (1..=20)
            .map(|i| row(i, Some(&format!("g{i}"))))
            .collect::<Vec<_>>(),
        0,
    );
    assert!(!s.scan_allowed());
}

#[test]
fn discarded_head_lets_the_group_go_on() {
    let mut s = Scheduler::new(Ordering::Group, 64, 100);
    s.accept(vec![row(1, Some("a")), row(2, Some("a"))], 0);
    assert_eq!(drain(&mut s), vec![1]);
    s.on_gone(1);
    assert_eq!(drain(&mut s), vec![2]);
    assert!(s.take_deletes().is_empty());
}

#[test]
fn a_row_revived_below_a_held_head_is_read_again_and_goes_out_before_it() {
    let mut s = Scheduler::new(Ordering::Group, 64, 100);
    s.accept(vec![row(2, Some("g"))], 0);
    assert_eq!(drain(&mut s), vec![2]);
    let retry_at = 1_000_000;
    s.on_failure(2, retry_at);
    // `retry_dead` puts row 1 back under its old id, below the held head: the admin
    // change reads the group again from its first row, not from the head.
    s.on_admin_change();
    let fetch = s.next_fetch().expect("the held group is read again");
    assert_eq!(
        fetch,
        Fetch::Group {
            key: "g".into(),
            filter: Some("g".into()),
            from: i64::MIN
        }
    );
    let mut held = row(2, Some("g"));
    held.attempts = 1;
    held.retry_at_ms = Some(retry_at);
    s.on_fetched(&fetch, vec![row(1, Some("g")), held], true, 10);
    let mut at_10 = || {
        std::iter::from_fn(|| s.next_dispatch(10))
            .map(|m| m.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(at_10(), vec![1], "the revived row goes out at once");
    s.on_success(1);
    let mut at_10 = || {
        std::iter::from_fn(|| s.next_dispatch(10))
            .map(|m| m.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at_10(),
        Vec::<i64>::new(),
        "the head waits for its retry time"
    );
    assert_eq!(s.next_due(), Some(retry_at));
    s.fire_due(retry_at);
    assert!(matches!(s.next_fetch(), Some(Fetch::Group { from: 2, .. })));
}
