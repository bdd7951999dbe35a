//! Runs one route through the `camel-rs` facade: a timer fires three times, each exchange
//! is logged and reaches a mock, which must have seen all three within ten seconds.

use std::sync::Arc;
use std::time::Duration;

use camel_rs::builder::simple;
use camel_rs::components::MockComponent;
use camel_rs::{CamelContext, RouteBuilder};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The framework logs through `tracing`; this makes the `log:` endpoint's lines visible.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();

    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    let out = mock.endpoint("out");
    out.expected_message_count(3);
    out.expected_bodies_received(["tick 1", "tick 2", "tick 3"]);

    ctx.add_routes(vec![RouteBuilder::from(
        "timer:tick?period=10&repeat_count=3",
    )
    .set_body(simple("tick ${header.CamelTimerCounter}"))
    .to("log:facade-consumer")
    .to("mock:out")
    .build()])
        .await?;
    ctx.start().await?;
    let outcome = out.assert_is_satisfied(Duration::from_secs(10)).await;
    ctx.stop().await;
    outcome?;
    println!(
        "facade-consumer: {} exchanges reached mock:out",
        out.received_count()
    );
    Ok(())
}
