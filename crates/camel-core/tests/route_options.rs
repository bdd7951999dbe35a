//! Route options and the `log` step's map form, observed through the events they log:
//! `startup_order`, `auto_startup: false`, generated ids, and `{message, logging_level,
//! log_name}`.

use std::sync::{Arc, Mutex};

use camel_api::Exchange;
use camel_core::{CamelContext, RouteStatus};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// One event: its level, message and other fields.
type Event = (tracing::Level, String, Vec<(String, String)>);

/// Every event, in order.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<Event>>>);

#[derive(Default)]
struct Fields {
    message: String,
    others: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message = text;
        } else {
            self.others.push((field.name().to_string(), text));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.others
            .push((field.name().to_string(), value.to_string()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), f.message, f.others));
    }
}

impl Events {
    fn field(fields: &[(String, String)], name: &str) -> Option<String> {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// The route ids of the "route started" events, in order.
    fn started(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, m, _)| m == "route started")
            .filter_map(|(_, _, f)| Self::field(f, "route_id"))
            .collect()
    }
}

#[tokio::test]
async fn startup_order_auto_startup_and_generated_ids() {
    let events = Events::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    let yaml = r#"
- route:
    id: late
    startup_order: 20
    from: {uri: direct:late, steps: [{log: late}]}
- route:
    id: early
    startup_order: 10
    from: {uri: direct:early, steps: [{log: early}]}
- route:
    id: manual
    auto_startup: false
    from: {uri: direct:manual, steps: [{log: manual}]}
- from: {uri: direct:anon1, steps: [{log: a}]}
- from: {uri: direct:anon2, steps: [{log: b}]}
"#;
    let ctx = CamelContext::new();
    let ids = ctx
        .add_routes(camel_core::yaml::load_str(yaml, "options.yaml").unwrap())
        .await
        .unwrap();
    assert_eq!(ids, ["late", "early", "manual", "route1", "route2"]);
    ctx.start().await.unwrap();

    // Ordered routes first, by their number; then the others in definition order.
    assert_eq!(events.started(), ["early", "late", "route1", "route2"]);
    let routes = ctx.route_controller();
    assert_eq!(routes.status("manual").await.unwrap(), RouteStatus::Stopped);
    routes.start_route("manual").await.unwrap();
    assert_eq!(routes.status("manual").await.unwrap(), RouteStatus::Started);
    ctx.request("direct:manual", Exchange::new("x"))
        .await
        .unwrap();
    ctx.stop().await;
}

#[tokio::test]
async fn log_step_map_form_sets_level_and_logger() {
    let events = Events::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    let yaml = r#"
- route:
    id: audit
    from:
      uri: direct:audit
      steps:
        - log: {message: "got ${body}", logging_level: WARN, log_name: audit.trail}
        - log: {message: "quiet ${body}", logging_level: debug}
"#;
    let ctx = CamelContext::new();
    ctx.add_routes(camel_core::yaml::load_str(yaml, "log.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:audit", Exchange::new("x"))
        .await
        .unwrap();
    ctx.stop().await;

    let all = events.0.lock().unwrap().clone();
    let got = all
        .iter()
        .find(|(_, m, _)| m == "got x")
        .expect("the first log step logged");
    assert_eq!(got.0, tracing::Level::WARN);
    assert_eq!(
        Events::field(&got.2, "logger").as_deref(),
        Some("audit.trail")
    );
    let quiet = all
        .iter()
        .find(|(_, m, _)| m == "quiet x")
        .expect("the second log step logged");
    assert_eq!(quiet.0, tracing::Level::DEBUG);
    assert_eq!(Events::field(&quiet.2, "logger").as_deref(), Some("audit"));
}
