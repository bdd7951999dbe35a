//! Group order of the outbox through the binary on PostgreSQL, as a new user meets it:
//! twenty routes each publish their own group one message at a time (a timer waits for
//! each publish to commit), and one relay route logs every delivery. Transactions of
//! different groups commit out of id order all the time here; before ADR 0032 about one
//! delivery in ten overtook an earlier message of its group.

mod support;

use std::collections::HashMap;

use support::*;

const GROUPS: usize = 20;
const PER_GROUP: usize = 200;

fn routes(name: &str, url: &str) -> String {
    let mut yaml = String::new();
    for g in 0..GROUPS {
        yaml.push_str(&format!(
            "- route:
    id: pub-{g}
    from:
      uri: timer:g{g}
      parameters: {{period: 1, repeat_count: {PER_GROUP}}}
      steps:
        - to:
            uri: outbox:{name}
            parameters: {{datasource: '{url}', group_key: 'g{g}'}}
"
        ));
    }
    yaml.push_str(&format!(
        "- route:
    id: relay
    from:
      uri: outbox:{name}
      parameters: {{datasource: '{url}'}}
      steps:
        - log: 'relayed ${{header.CamelOutboxGroupKey}} ${{header.CamelOutboxId}}'
"
    ));
    yaml
}

#[test]
fn sequential_publishers_of_many_groups_are_relayed_in_group_order() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let name = format!("order_{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes(&name, &url)).unwrap();
    let out = camel(&[
        "run",
        file.to_str().unwrap(),
        // Every publish and every relay is one exchange. An idle limit alone stopped the
        // run early when a loaded machine paused the relay for two seconds; it stays as a
        // generous fallback only.
        "--max-messages",
        &(2 * GROUPS * PER_GROUP).to_string(),
        "--max-idle-seconds",
        "20",
        "--max-seconds",
        "170",
    ]);
    let log = text(&out);
    assert!(out.status.success(), "{log}");

    // First deliveries per group, in the order the relay handed them out.
    let mut seen = std::collections::HashSet::new();
    let mut per_group: HashMap<String, Vec<i64>> = HashMap::new();
    for line in log.lines() {
        let Some(rest) = line.split("relayed ").nth(1) else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(group), Some(Ok(id))) = (parts.next(), parts.next().map(str::parse::<i64>))
        else {
            continue;
        };
        if seen.insert(id) {
            per_group.entry(group.to_string()).or_default().push(id);
        }
    }
    let mut out_of_order = 0;
    for ids in per_group.values() {
        out_of_order += ids.windows(2).filter(|w| w[0] > w[1]).count();
    }
    assert_eq!(per_group.len(), GROUPS, "every group relayed");
    assert_eq!(seen.len(), GROUPS * PER_GROUP, "every message relayed");
    assert_eq!(
        out_of_order, 0,
        "first deliveries that overtook an earlier message of their group"
    );

    drop_outbox_tables(&url, &name);
}
