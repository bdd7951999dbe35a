//! `master:NAMESPACE:ENDPOINT` (Camel's master component): the consumer of `ENDPOINT`
//! runs only while this process leads `NAMESPACE`.
//!
//! While leading under epoch E, every exchange gets the properties `CamelClusterEpoch`
//! (E) and `CamelClusterNamespace`, which fenced writers check
//! ([`check_fence`](crate::check_fence)); an exchange created after the local lease ran
//! out is refused before it enters the route. On loss the inner consumer is cancelled and
//! given what remains of the lease to return; the route itself stays started, waiting to
//! lead again.

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, ConsumerContext, Endpoint,
    EndpointUri, ExchangeStats, RoutePipeline,
};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::election::Leadership;
use crate::partition::{partition_options, PartitionedConsumer};
use crate::service::{ClusterService, Membership};

/// How often a leading route copies its inner consumer's health.
const HEALTH_MIRROR: std::time::Duration = std::time::Duration::from_secs(1);

/// The schemes whose consumers can be partitioned (they read `partition`/`partitions`).
const PARTITIONABLE: &[&str] = &["file", "sql"];

/// The exchange property holding the fencing epoch the exchange started under.
pub const EPOCH_PROPERTY: &str = "CamelClusterEpoch";
/// The exchange property holding the namespace of that epoch.
pub const NAMESPACE_PROPERTY: &str = "CamelClusterNamespace";

/// What a fenced write checks, and why it refuses when the exchange lacks it.
pub const UNFENCED: &str = "fenced: fence=true needs an exchange started by a leader-only \
     route (`master:` or `route_policy: {leader: …}`), which carries CamelClusterEpoch";

/// The namespace and epoch a leader-only route stamped on `exchange`, or `None` when it
/// was not started under a lease (a fenced write then refuses with [`UNFENCED`]).
pub fn fencing_token(exchange: &camel_api::Exchange) -> Option<(String, u64)> {
    let epoch = exchange
        .property(EPOCH_PROPERTY)
        .and_then(|v| v.as_i64())
        .and_then(|v| u64::try_from(v).ok())?;
    let namespace = exchange.property(NAMESPACE_PROPERTY)?.as_str()?.to_string();
    Some((namespace, epoch))
}

/// The `master` component. Without a cluster service (no `camel.cluster.backend`) its
/// endpoints are refused with a message naming the property.
#[derive(Debug, Clone)]
pub struct MasterComponent {
    service: Option<Arc<ClusterService>>,
}

impl MasterComponent {
    /// A component electing through `service`.
    pub fn new(service: Option<Arc<ClusterService>>) -> Self {
        MasterComponent { service }
    }
}

/// Checks a namespace: letters, digits, `-`, `_`, `.`; at most 128 bytes (it is a key
/// in every store and a metric label).
pub fn check_namespace(namespace: &str) -> Result<(), String> {
    if namespace.is_empty() || namespace.len() > 128 {
        return Err("a cluster namespace has 1 to 128 characters".into());
    }
    if !namespace
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "the cluster namespace `{namespace}` may hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    Ok(())
}

impl Component for MasterComponent {
    fn scheme(&self) -> &str {
        "master"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let Some((namespace, inner)) = uri.path().split_once(':') else {
            return Err(CamelError::invalid_uri(
                raw,
                "write `master:NAMESPACE:ENDPOINT`, as in `master:orders:timer:tick`",
            ));
        };
        let (namespace, inner) = (namespace.to_string(), inner.to_string());
        // `NAMESPACE/N`: a partitioned route (ADR 0148).
        let (namespace, partitions) = match namespace.split_once('/') {
            None => (namespace, None),
            Some((ns, n)) => {
                let n = partition_options(Some("0"), Some(n))
                    .map_err(|why| CamelError::invalid_uri(raw.clone(), why))?
                    .map(|(_, n)| n);
                (ns.to_string(), n)
            }
        };
        check_namespace(&namespace).map_err(|why| CamelError::invalid_uri(raw.clone(), why))?;
        if !inner.contains(':') {
            return Err(CamelError::invalid_uri(
                raw,
                format!("`{inner}` is not an endpoint URI (`scheme:path`)"),
            ));
        }
        if partitions.is_some() {
            let scheme = inner.split(':').next().unwrap_or_default();
            if !PARTITIONABLE.contains(&scheme) {
                return Err(CamelError::invalid_uri(
                    raw,
                    format!(
                        "`{scheme}:` cannot be partitioned: partitions are for the polling \
                         consumers file: and sql:; Kafka and JetStream consumers share \
                         their work through their broker's own group assignment"
                    ),
                ));
            }
        }
        let Some(service) = self.service.clone() else {
            return Err(CamelError::invalid_uri(
                raw,
                "leader-only and partitioned routes need a cluster: set `camel.cluster.backend` (postgres, redis, nats or kubernetes) and `camel.cluster.url` (in a Kubernetes pod, Kubernetes Leases are the default)",
            ));
        };
        // Every parameter belongs to the inner endpoint.
        let query: Vec<String> = uri
            .parameters
            .take_prefixed("")
            .into_iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    camel_api::percent_encode(&k),
                    camel_api::percent_encode(&v)
                )
            })
            .collect();
        let inner_uri = if query.is_empty() {
            inner
        } else {
            format!("{inner}?{}", query.join("&"))
        };
        if let Some(count) = partitions {
            // One endpoint per partition, built now so a mistake is reported at load.
            let glue = if inner_uri.contains('?') { '&' } else { '?' };
            let partitions = (0..count)
                .map(|k| {
                    ctx.endpoint(&format!(
                        "{inner_uri}{glue}partition={k}&partitions={count}"
                    ))
                })
                .collect::<Result<Vec<_>, _>>()?;
            for endpoint in &partitions {
                endpoint.consumer()?;
            }
            return Ok(Arc::new(MasterEndpoint {
                uri: raw.to_string(),
                namespace,
                inner: partitions[0].clone(),
                first: std::sync::Mutex::new(None),
                service,
                partitions,
            }));
        }
        let endpoint = ctx.endpoint(&inner_uri)?;
        // The inner consumer is built now, so a mistake in it is reported at load.
        let first = endpoint.consumer()?;
        Ok(Arc::new(MasterEndpoint {
            uri: raw.to_string(),
            namespace,
            inner: endpoint,
            first: std::sync::Mutex::new(Some(first)),
            service,
            partitions: Vec::new(),
        }))
    }
}

/// A `master:` endpoint: the inner endpoint behind a leadership.
#[derive(Debug)]
struct MasterEndpoint {
    uri: String,
    namespace: String,
    inner: Arc<dyn Endpoint>,
    first: std::sync::Mutex<Option<Box<dyn Consumer>>>,
    service: Arc<ClusterService>,
    /// A partitioned route: the inner endpoint of each partition.
    partitions: Vec<Arc<dyn Endpoint>>,
}

impl Endpoint for MasterEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "`master:` is a source only (use it in `from`)",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        if !self.partitions.is_empty() {
            return Ok(Box::new(PartitionedSource(Some(PartitionedConsumer {
                namespace: self.namespace.clone(),
                partitions: self.partitions.clone(),
                service: self.service.clone(),
            }))));
        }
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(Box::new(LeaderConsumer {
            namespace: self.namespace.clone(),
            inner: self.inner.clone(),
            first,
            service: self.service.clone(),
        }))
    }

    fn delivers_in_order(&self) -> bool {
        self.inner.delivers_in_order()
    }
}

/// Runs the inner consumer while leading.
#[derive(Debug)]
pub(crate) struct LeaderConsumer {
    pub(crate) namespace: String,
    pub(crate) inner: Arc<dyn Endpoint>,
    pub(crate) first: Option<Box<dyn Consumer>>,
    pub(crate) service: Arc<ClusterService>,
}

/// The consumer of a partitioned route, as a [`Consumer`].
#[derive(Debug)]
struct PartitionedSource(Option<PartitionedConsumer>);

#[async_trait]
impl Consumer for PartitionedSource {
    async fn run(mut self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        match self.0.take() {
            Some(consumer) => consumer.run(ctx).await,
            None => Ok(()),
        }
    }
}

enum Ended {
    Stopped,
    Lost,
    Inner(Result<(), CamelError>),
}

#[async_trait]
impl Consumer for LeaderConsumer {
    async fn run(mut self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let membership = loop {
            match self.service.join(&self.namespace).await {
                Ok(m) => break m,
                Err(e) => {
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(self.service.settings().retry_interval) => {}
                    }
                }
            }
        };
        ctx.health().set_healthy();
        let result = self.lead_while_elected(&ctx, &membership).await;
        membership.leave().await;
        result
    }
}

impl LeaderConsumer {
    pub(crate) async fn lead_while_elected(
        &mut self,
        ctx: &ConsumerContext,
        membership: &Membership,
    ) -> Result<(), CamelError> {
        let mut state = membership.watch();
        loop {
            // Standby until this process leads.
            let (epoch, mut until) = loop {
                if let Leadership::Leader { epoch, until } = *state.borrow_and_update() {
                    if Instant::now() < until {
                        break (epoch, until);
                    }
                }
                tokio::select! {
                    _ = ctx.cancelled() => return Ok(()),
                    changed = state.changed() => if changed.is_err() { return Ok(()) },
                }
            };
            tracing::info!(route_id = ctx.route_id(), namespace = %self.namespace, epoch, "leading: starting the consumer");
            let consumer = match self.first.take() {
                Some(c) => c,
                None => self.inner.consumer()?,
            };
            let cancel = ctx.cancellation().child_token();
            let child = ConsumerContext::new(
                ctx.route_id().into(),
                Arc::new(RoutePipeline::new(stamp(
                    ctx.clone(),
                    &self.namespace,
                    epoch,
                    state.clone(),
                ))),
                Arc::default(),
                cancel.clone(),
                ExchangeStats::new(),
                Arc::default(),
            );
            // The inner consumer reports its source's health to its own context; the
            // route's health mirrors it (read once a second).
            let inner_health = child.health().clone();
            let mut mirror = tokio::time::interval(HEALTH_MIRROR);
            let mut running = tokio::spawn(consumer.run(child));
            let ended = loop {
                tokio::select! {
                    _ = ctx.cancelled() => break Ended::Stopped,
                    _ = mirror.tick() => match inner_health.failing() {
                        Some(reason) => ctx.health().set_failing(reason),
                        None => ctx.health().set_healthy(),
                    },
                    r = &mut running => break Ended::Inner(r.unwrap_or_else(|e| Err(CamelError::processor(format!("the consumer task failed: {e}"))))),
                    changed = state.changed() => {
                        let now = *state.borrow_and_update();
                        match now {
                            Leadership::Leader { epoch: e, until: u } if e == epoch => until = u,
                            _ => break Ended::Lost,
                        }
                        if changed.is_err() { break Ended::Lost; }
                    }
                }
            };
            match ended {
                Ended::Inner(result) => return result,
                Ended::Stopped => {
                    cancel.cancel();
                    let _ = running.await;
                    return Ok(());
                }
                Ended::Lost => {
                    // Standing by is healthy; the source's state is the next leader's.
                    ctx.health().set_healthy();
                    tracing::warn!(route_id = ctx.route_id(), namespace = %self.namespace, epoch, "leadership lost: stopping the consumer");
                    cancel.cancel();
                    stop_by(running, until).await;
                }
            }
        }
    }
}

/// Waits for the consumer to return until `deadline` (what remains of the lease), then
/// aborts it.
async fn stop_by(mut running: tokio::task::JoinHandle<Result<(), CamelError>>, deadline: Instant) {
    if tokio::time::timeout_at(deadline, &mut running)
        .await
        .is_err()
    {
        running.abort();
        tracing::warn!("the consumer did not stop within the lease; aborted");
    }
}

/// The pipeline the inner consumer sends to: refuses an exchange once the leadership of
/// `epoch` is over (by the local clock), stamps the epoch, and hands it to the route.
fn stamp(
    route: ConsumerContext,
    namespace: &str,
    epoch: u64,
    state: watch::Receiver<Leadership>,
) -> BoxProcessor {
    let namespace: Arc<str> = namespace.into();
    BoxProcessor::from_fn(move |mut exchange: camel_api::Exchange| {
        let route = route.clone();
        let namespace = namespace.clone();
        let now = *state.borrow();
        async move {
            if now.epoch() != Some(epoch) || !now.is_leader_now() {
                return Err(CamelError::processor(format!(
                    "not the leader of `{namespace}` any more (epoch {epoch} ended)"
                )));
            }
            exchange.properties.insert(EPOCH_PROPERTY, epoch);
            exchange.properties.insert(NAMESPACE_PROPERTY, &*namespace);
            route.send(exchange).await
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::{BoxExpression, BoxPredicate};
    use std::any::Any;

    struct NoContext;

    impl ComponentContext for NoContext {
        fn expression(&self, _: &str, _: &str) -> Result<BoxExpression, CamelError> {
            Err(CamelError::processor("none"))
        }
        fn predicate(&self, _: &str, _: &str) -> Result<BoxPredicate, CamelError> {
            Err(CamelError::processor("none"))
        }
        fn producer(&self, _: &str) -> Result<BoxProcessor, CamelError> {
            Err(CamelError::processor("none"))
        }
        fn resource(&self, _: &str) -> Option<Arc<dyn Any + Send + Sync>> {
            None
        }
        fn route_id(&self) -> Option<&str> {
            None
        }
    }

    fn refused(uri: &str) -> String {
        let component = MasterComponent::new(None);
        let uri = EndpointUri::parse(uri).unwrap();
        component.endpoint(uri, &NoContext).unwrap_err().to_string()
    }

    #[test]
    fn uris_are_checked_before_the_cluster_is() {
        assert!(refused("master:orders").contains("master:NAMESPACE:ENDPOINT"));
        assert!(refused("master:or ders:timer:t").contains("only letters"));
        assert!(refused("master:orders:tick").contains("not an endpoint URI"));
        assert!(refused("master:orders:timer:tick").contains("camel.cluster.backend"));
        assert!(refused("master:orders/0:file:in").contains("from 1 to"));
        assert!(refused("master:orders/x:file:in").contains("from 1 to"));
        assert!(refused("master:orders/4:kafka:t").contains("group assignment"));
        assert!(refused("master:orders/4:file:in").contains("camel.cluster.backend"));
    }

    #[test]
    fn namespaces_are_short_plain_names() {
        assert!(check_namespace("orders.eu-1_a").is_ok());
        assert!(check_namespace("").is_err());
        assert!(check_namespace(&"a".repeat(129)).is_err());
        assert!(check_namespace("a/b").is_err());
    }
}
