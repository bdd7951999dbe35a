//! The broker components through the binary: routes using them validate without any
//! credentials or broker (the AWS default chain is asked only at the first request).

mod support;

#[test]
fn broker_routes_validate_without_credentials() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        r#"
- route:
    id: from-sqs
    from:
      uri: "aws2-sqs:orders.fifo?maxMessagesPerPoll=5&concurrentConsumers=2&visibilityTimeout=60"
      steps:
        - to: "sqs:copies?region=eu-west-1"
- route:
    id: from-jetstream
    from:
      uri: "nats:orders.>?durableName=workers&jetstreamName=ORDERS&maxAckPending=50&ackWait=30s&maxDeliver=5&deadLetterSubject=orders.dead"
      steps:
        - to: "rabbitmq:orders?routingKey=new&exchangeType=topic"
- route:
    id: from-rabbitmq
    from:
      uri: "rabbitmq:orders?queue=orders.q&routingKey=new&prefetchCount=20&deadLetterExchange=orders.dlx"
      steps:
        - to: "nats:orders.answers?exchangePattern=InOut&requestTimeout=2s"
"#,
    )
    .expect("write the routes");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_camel"));
    cmd.args(["validate", file.to_str().expect("a UTF-8 path")]);
    for var in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd
        .env("AWS_CONFIG_FILE", dir.path().join("none"))
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"))
        .output()
        .expect("the camel binary runs");
    let text = support::text(&out);
    assert!(out.status.success(), "{text}");

    // A bad option still fails, naming it.
    std::fs::write(
        &file,
        "- route:\n    from:\n      uri: \"rabbitmq:orders?prefetch_count=0\"\n      steps:\n        - log: x\n",
    )
    .expect("write the routes");
    let out = support::camel(&["validate", file.to_str().expect("a UTF-8 path")]);
    let text = support::text(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("prefetch_count"), "{text}");
}
