//! `route_policy: {leader: NAMESPACE}` (Camel's `routePolicy`) loads as a `master:` source
//! (ADR 0140); anything else under the key is a located error.

use camel_core::RouteDefinition;

fn load(text: &str) -> Result<Vec<RouteDefinition>, String> {
    camel_core::yaml::load_str(text, "routes.yaml").map_err(|e| e.to_string())
}

#[test]
fn a_leader_policy_makes_the_source_a_master_endpoint() {
    let routes = load(
        "- route:\n    routePolicy: {leader: orders}\n    from:\n      uri: timer:tick\n      parameters: {period: 100}\n      steps:\n        - log: hi\n",
    )
    .unwrap();
    assert_eq!(routes[0].from.uri, "master:orders:timer:tick");
    // The inner endpoint keeps its parameters.
    assert!(format!("{:?}", routes[0].from).contains("period"));
    // A source already written as `master:` is left as it is.
    let routes = load(
        "- route:\n    route_policy: {leader: a}\n    from: {uri: 'master:a:timer:t', steps: [{log: hi}]}\n",
    )
    .unwrap();
    assert_eq!(routes[0].from.uri, "master:a:timer:t");
}

#[test]
fn other_policies_and_bad_namespaces_are_located_errors() {
    let e = load(
        "- route:\n    routePolicy: myPolicyBean\n    from: {uri: 'timer:t', steps: [{log: hi}]}\n",
    )
    .unwrap_err();
    assert!(
        e.contains("routes.yaml:2") && e.contains("bean reference"),
        "{e}"
    );
    let e = load("- route:\n    route_policy: {leader: 'a b'}\n    from: {uri: 'timer:t', steps: [{log: hi}]}\n")
        .unwrap_err();
    assert!(e.contains("not a namespace"), "{e}");
    let e = load(
        "- route:\n    route_policy: {leeder: a}\n    from: {uri: 'timer:t', steps: [{log: hi}]}\n",
    )
    .unwrap_err();
    assert!(e.contains("`leeder` is not a route policy option"), "{e}");
}

#[test]
fn partitions_make_a_partitioned_master_source_named_by_policy_or_id() {
    let routes = load(
        "- route:\n    id: inbox\n    partitions: 6\n    from: {uri: 'file:in', steps: [{log: hi}]}\n",
    )
    .unwrap();
    assert_eq!(routes[0].from.uri, "master:inbox/6:file:in");
    let routes = load(
        "- route:\n    partitions: '3'\n    routePolicy: {leader: orders}\n    from: {uri: 'file:in', steps: [{log: hi}]}\n",
    )
    .unwrap();
    assert_eq!(routes[0].from.uri, "master:orders/3:file:in");
    let e = load("- route:\n    partitions: 3\n    from: {uri: 'file:in', steps: [{log: hi}]}\n")
        .unwrap_err();
    assert!(e.contains("`partitions` needs an `id`"), "{e}");
    let e = load(
        "- route:\n    id: r\n    partitions: 0\n    from: {uri: 'file:in', steps: [{log: hi}]}\n",
    )
    .unwrap_err();
    assert!(e.contains("a count from 1 to 256"), "{e}");
}
