//! What `--watch` may change: only what changed in the route files since it last read
//! them. Routes the admin API added, and a swap it made to a route the file did not
//! change since, survive an unrelated edit of the file.
//!
//! The watcher remembers the definitions it read last and the ids generated for the
//! file's routes without an `id` (they cannot be matched by id, so they are replaced as a
//! whole when any of them changes). From those, the running routes and the new reading it
//! builds the set to hand to `CamelContext::reload`, which then touches only the routes
//! whose definition differs from the running one.

use std::collections::{HashMap, HashSet};

use camel_core::context::ReloadReport;
use camel_core::RouteDefinition;

/// The routes the files held when last applied.
#[derive(Debug, Default)]
pub(crate) struct FileRoutes {
    /// Definitions with an `id`, by id.
    named: HashMap<String, RouteDefinition>,
    /// Definitions without an `id`, in file order.
    unnamed: Vec<RouteDefinition>,
    /// The ids the context generated for `unnamed`.
    generated: HashSet<String>,
}

impl FileRoutes {
    /// The files' routes as first added, with the ids `add_routes` returned (in order).
    pub(crate) fn new(routes: &[RouteDefinition], ids: &[String]) -> Self {
        let mut me = FileRoutes::default();
        for (route, id) in routes.iter().zip(ids) {
            if route.id.is_none() {
                me.generated.insert(id.clone());
            }
        }
        me.remember(routes);
        me
    }

    fn remember(&mut self, routes: &[RouteDefinition]) {
        self.named = routes
            .iter()
            .filter_map(|r| Some((r.id.clone()?, r.clone())))
            .collect();
        self.unnamed = routes.iter().filter(|r| r.id.is_none()).cloned().collect();
    }

    /// The route set to reload, given what runs now (every route, with its id) and the
    /// files' new reading.
    pub(crate) fn target(
        &self,
        running: Vec<RouteDefinition>,
        read: &[RouteDefinition],
    ) -> Vec<RouteDefinition> {
        let read_named: HashMap<&str, &RouteDefinition> = read
            .iter()
            .filter_map(|r| Some((r.id.as_deref()?, r)))
            .collect();
        let unnamed_changed = self.unnamed_changed(read);
        let mut target = Vec::new();
        let mut placed = HashSet::new();
        for route in running {
            let Some(id) = route.id.clone() else {
                continue;
            };
            let from_file = read_named.get(id.as_str());
            let keep = match from_file {
                // The file changed this route (or newly names it): the file wins.
                Some(new) if self.named.get(&id) != Some(*new) => Some((*new).clone()),
                // The file did not change it: whatever runs stays (a swap from the admin
                // API included).
                Some(_) => Some(route),
                // The file dropped it: removed. Not the file's: kept.
                None if self.named.contains_key(&id) => None,
                None if self.generated.contains(&id) && unnamed_changed => None,
                None => Some(route),
            };
            if let Some(r) = keep {
                placed.insert(id);
                target.push(r);
            }
        }
        for route in read {
            match route.id.as_deref() {
                Some(id) if !placed.contains(id) => target.push(route.clone()),
                None if unnamed_changed => target.push(route.clone()),
                _ => {}
            }
        }
        target
    }

    /// True when the routes without an `id` in `read` differ from the last reading's.
    fn unnamed_changed(&self, read: &[RouteDefinition]) -> bool {
        let now: Vec<&RouteDefinition> = read.iter().filter(|r| r.id.is_none()).collect();
        now.len() != self.unnamed.len() || now.iter().zip(&self.unnamed).any(|(a, b)| *a != b)
    }

    /// Records a reading that was applied with `report`.
    pub(crate) fn applied(&mut self, read: &[RouteDefinition], report: &ReloadReport) {
        if self.unnamed_changed(read) {
            let named: HashSet<&str> = read.iter().filter_map(|r| r.id.as_deref()).collect();
            self.generated = report
                .added
                .iter()
                .filter(|id| !named.contains(id.as_str()))
                .cloned()
                .collect();
        }
        self.remember(read);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(id: Option<&str>, uri: &str) -> RouteDefinition {
        let mut r = RouteDefinition::from(uri);
        r.id = id.map(str::to_string);
        r
    }

    fn ids(routes: &[RouteDefinition]) -> Vec<(String, String)> {
        let mut v: Vec<_> = routes
            .iter()
            .map(|r| (r.id.clone().unwrap_or_default(), r.from.uri.clone()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_unrelated_edit_keeps_admin_routes_and_swaps() {
        let file = vec![route(Some("a"), "timer:a"), route(Some("b"), "timer:b")];
        let state = FileRoutes::new(&file, &["a".into(), "b".into()]);
        // The admin API swapped `a` and added `c`.
        let running = vec![
            route(Some("a"), "timer:a-admin"),
            route(Some("b"), "timer:b"),
            route(Some("c"), "timer:c"),
        ];
        // The file changes `b` only.
        let read = vec![route(Some("a"), "timer:a"), route(Some("b"), "timer:b2")];
        let target = state.target(running, &read);
        assert_eq!(
            ids(&target),
            vec![
                ("a".into(), "timer:a-admin".into()),
                ("b".into(), "timer:b2".into()),
                ("c".into(), "timer:c".into()),
            ]
        );
    }

    #[test]
    fn the_file_wins_where_it_changed_and_removes_what_it_dropped() {
        let file = vec![route(Some("a"), "timer:a"), route(Some("b"), "timer:b")];
        let state = FileRoutes::new(&file, &["a".into(), "b".into()]);
        let running = vec![
            route(Some("a"), "timer:a-admin"),
            route(Some("b"), "timer:b"),
        ];
        let read = vec![route(Some("a"), "timer:a2"), route(Some("d"), "timer:d")];
        assert_eq!(
            ids(&state.target(running, &read)),
            vec![
                ("a".into(), "timer:a2".into()),
                ("d".into(), "timer:d".into())
            ]
        );
    }

    #[test]
    fn routes_without_ids_are_replaced_together_when_any_changes() {
        let file = vec![route(None, "timer:x"), route(Some("a"), "timer:a")];
        let mut state = FileRoutes::new(&file, &["route1".into(), "a".into()]);
        let running = vec![
            route(Some("route1"), "timer:x"),
            route(Some("a"), "timer:a"),
        ];
        // Unchanged: the generated one stays.
        let same = state.target(running.clone(), &file);
        assert_eq!(ids(&same), ids(&running));
        // Changed: the old generated route goes, the new one comes without an id.
        let read = vec![route(None, "timer:y"), route(Some("a"), "timer:a")];
        let target = state.target(running, &read);
        assert_eq!(
            ids(&target),
            vec![
                ("".into(), "timer:y".into()),
                ("a".into(), "timer:a".into())
            ]
        );
        let report = ReloadReport {
            added: vec!["route2".into()],
            ..Default::default()
        };
        state.applied(&read, &report);
        assert!(state.generated.contains("route2") && !state.generated.contains("route1"));
    }
}
