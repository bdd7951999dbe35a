//! The cluster service of `camel run` (ADR 0140): read from `camel.cluster.*` properties,
//! behind the `master:` component and `route_policy: {leader: …}`, shown in `/health`.

use std::sync::Arc;

use camel_cluster::{ClusterService, ClusterSettings, MasterComponent, CLUSTER_RESOURCE};
use camel_core::properties::Properties;
use camel_core::CamelContext;
use serde_json::{json, Value};

/// Registers the `master` component (refusing its endpoints when no backend is set) and,
/// with a backend, the cluster service as a context resource. Nothing connects yet.
/// `for_pod`: read the properties as in a Kubernetes pod, whatever this process runs in
/// (ADR 0172).
pub(crate) fn register(
    ctx: &CamelContext,
    properties: &Properties,
    for_pod: bool,
) -> Result<(), String> {
    let get = |k: &str| properties.get(k).map(str::to_string);
    let settings = match for_pod {
        true => ClusterSettings::from_properties_in(get, true),
        false => ClusterSettings::from_properties(get),
    }
    .map_err(|e| e.to_string())?;
    let service = settings.map(ClusterService::new);
    if let Some(service) = &service {
        ctx.add_resource(CLUSTER_RESOURCE, service.clone());
    }
    ctx.add_component(Arc::new(MasterComponent::new(service)));
    Ok(())
}

/// The cluster part of `/health?details`: per namespace, whether this process leads and
/// under which epoch, and who leads as the store says (asked with a short deadline).
pub(crate) async fn health_details(ctx: &CamelContext) -> Option<Value> {
    let service = ctx
        .registry()
        .resource(CLUSTER_RESOURCE)?
        .downcast::<ClusterService>()
        .ok()?;
    let mut namespaces = Vec::new();
    for status in service.status() {
        let asked = tokio::time::timeout(
            std::time::Duration::from_secs(1),
            service.leader(&status.namespace),
        )
        .await;
        let leader = match asked {
            Ok(Ok(Some(info))) => json!({"holder": info.holder, "epoch": info.epoch}),
            Ok(Ok(None)) => Value::Null,
            Ok(Err(e)) => json!({"error": e.to_string()}),
            Err(_) => json!({"error": "the lease store did not answer within 1 s"}),
        };
        namespaces.push(json!({
            "namespace": status.namespace,
            "leader": status.leader,
            "epoch": status.epoch,
            "current_leader": leader,
        }));
    }
    Some(json!({
        "backend": service.settings().backend.as_str(),
        "holder": service.settings().holder,
        "namespaces": namespaces,
    }))
}
