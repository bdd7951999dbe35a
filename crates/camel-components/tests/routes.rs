//! Components wired into small routes by hand (no camel-core): what a user's YAML would
//! build, checked end to end with real folders and paused time.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{names, Body, BoxProcessor, CamelError, ConsumerContext, Endpoint, Exchange};
use camel_components::{all_with_mock, MockComponent};
use tokio::task::JoinHandle;

#[allow(dead_code)]
#[path = "../src/testing.rs"]
mod testing;

/// The registered components, looked up by scheme as a context would.
struct Registry(Vec<Arc<dyn camel_api::Component>>);

impl Registry {
    fn endpoint(&self, uri: &str) -> Arc<dyn Endpoint> {
        let parsed = camel_api::EndpointUri::parse(uri).unwrap();
        let component = self
            .0
            .iter()
            .find(|c| c.scheme() == parsed.scheme())
            .unwrap();
        testing::endpoint(component.as_ref(), uri).unwrap()
    }

    fn route(
        &self,
        id: &str,
        from: &str,
        pipeline: BoxProcessor,
    ) -> (ConsumerContext, JoinHandle<Result<(), CamelError>>) {
        let ctx = ConsumerContext::for_pipeline(id, pipeline);
        let consumer = self.endpoint(from).consumer().unwrap();
        (ctx.clone(), tokio::spawn(consumer.run(ctx)))
    }
}

/// `pipeline` then the producer of `to`.
fn then(pipeline: BoxProcessor, to: BoxProcessor) -> BoxProcessor {
    BoxProcessor::from_fn(move |ex: Exchange| {
        let first = pipeline.process(ex);
        let to = to.clone();
        async move { to.process(first.await?).await }
    })
}

#[tokio::test(start_paused = true)]
async fn file_in_transform_file_out() {
    let mock = MockComponent::new();
    let components = Registry(all_with_mock(&mock));
    let root = tempfile::tempdir().unwrap();
    let (inbox, outbox) = (root.path().join("in"), root.path().join("out"));
    std::fs::create_dir_all(inbox.join("nested")).unwrap();
    for (name, body) in [
        ("a.txt", "alpha"),
        ("b.txt", "beta"),
        ("nested/c.txt", "gamma"),
    ] {
        std::fs::write(inbox.join(name), body).unwrap();
    }

    let upper = BoxProcessor::sync(|mut ex: Exchange| {
        let text = ex.message.body.as_text().unwrap_or_default().to_uppercase();
        ex.message.body = Body::from(text);
        Ok(ex)
    });
    let write = components
        .endpoint(&format!("file:{}", outbox.display()))
        .producer()
        .unwrap();
    let done = components.endpoint("mock:done").producer().unwrap();
    let from = format!("file:{}?recursive=true&initialDelay=0", inbox.display());
    let (ctx, task) = components.route("files", &from, then(then(upper, write), done));

    let done = mock.endpoint("done");
    done.expected_message_count(3);
    done.assert_is_satisfied(Duration::from_secs(10))
        .await
        .unwrap();
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();

    for (name, body) in [
        ("a.txt", "ALPHA"),
        ("b.txt", "BETA"),
        ("nested/c.txt", "GAMMA"),
    ] {
        assert_eq!(std::fs::read_to_string(outbox.join(name)).unwrap(), body);
        assert!(inbox.join(".camel").join(name).exists(), "{name} not moved");
        assert!(!inbox.join(name).exists(), "{name} still in the inbox");
    }
}

#[tokio::test(start_paused = true)]
async fn timer_to_seda_to_direct_to_mock() {
    let mock = MockComponent::new();
    let components = Registry(all_with_mock(&mock));
    let to_seda = components.endpoint("seda:work").producer().unwrap();
    let to_direct = components.endpoint("direct:finish").producer().unwrap();
    let to_mock = components.endpoint("mock:end").producer().unwrap();

    let routes = [
        components.route("finish", "direct:finish", to_mock),
        components.route("work", "seda:work?concurrentConsumers=2", to_direct),
        components.route("tick", "timer:t?period=100&repeatCount=5", to_seda),
    ];

    let end = mock.endpoint("end");
    end.expected_message_count(5);
    end.assert_is_satisfied(Duration::from_secs(10))
        .await
        .unwrap();
    let mut counters: Vec<i64> = end
        .received()
        .iter()
        .filter_map(|ex| ex.header(names::TIMER_COUNTER)?.as_i64())
        .collect();
    counters.sort_unstable();
    assert_eq!(counters, [1, 2, 3, 4, 5]);

    for (ctx, task) in routes {
        ctx.cancellation().cancel();
        task.await.unwrap().unwrap();
    }
}
