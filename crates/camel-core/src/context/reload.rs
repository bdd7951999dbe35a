//! Reloading a whole route set, diffed by route id.

use std::collections::HashSet;

use super::CamelContext;
use crate::error::RouteErrors;
use crate::model::RouteDefinition;

/// What a [`CamelContext::reload`] changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReloadReport {
    /// Routes that were new and started.
    pub added: Vec<String>,
    /// Routes whose definition changed and were swapped.
    pub swapped: Vec<String>,
    /// Routes no longer defined, stopped and removed.
    pub removed: Vec<String>,
    /// Routes left as they were.
    pub unchanged: Vec<String>,
}

impl CamelContext {
    /// Replaces the running route set with `routes`, diffed by route id: new ids are added
    /// and started, ids no longer present are stopped and removed, and routes whose
    /// definition changed are swapped (see [`RouteController::swap`]); unchanged routes are
    /// not touched. Every new definition is compiled first: on any error nothing changes
    /// and every old route keeps running. Routes without an explicit id get a new one, so
    /// they are replaced.
    pub async fn reload(
        &self,
        mut routes: Vec<RouteDefinition>,
    ) -> Result<ReloadReport, RouteErrors> {
        // Validate the new set on its own (its ids replace the old ones).
        self.compile_all(&mut routes.clone(), Vec::new())?;
        let controller = self.route_controller();
        let old: Vec<(String, RouteDefinition)> = self
            .inner
            .routes
            .snapshot()
            .iter()
            .map(|r| {
                (
                    r.id().to_string(),
                    RouteDefinition::clone(&r.view().definition),
                )
            })
            .collect();
        let taken: HashSet<String> = old
            .iter()
            .map(|(id, _)| id.clone())
            .chain(routes.iter().filter_map(|r| r.id.clone()))
            .collect();
        for r in routes.iter_mut() {
            self.assign_id(r, &taken);
        }
        let new_ids: HashSet<String> = routes.iter().filter_map(|r| r.id.clone()).collect();
        let mut report = ReloadReport::default();
        let mut errors = Vec::new();
        for (id, _) in old.iter().filter(|(id, _)| !new_ids.contains(id)) {
            match controller.remove_route(id).await {
                Ok(_) => report.removed.push(id.clone()),
                Err(e) => errors.push(e),
            }
        }
        let mut added = Vec::new();
        for route in routes {
            let id = route.id.clone().unwrap_or_default();
            match old.iter().find(|(old_id, _)| *old_id == id) {
                Some((_, before)) if *before == route => report.unchanged.push(id),
                Some(_) => match controller.swap(&id, route).await {
                    Ok(_) => report.swapped.push(id),
                    Err(e) => errors.push(e),
                },
                None => added.push(route),
            }
        }
        if !added.is_empty() {
            match self.add_routes(added).await {
                Ok(ids) => report.added.extend(ids),
                Err(e) => errors.extend(e.0),
            }
        }
        if errors.is_empty() {
            Ok(report)
        } else {
            Err(RouteErrors(errors))
        }
    }
}
