//! [`AdviceWith`]: Camel's advice-with, the edits a test makes to a route before the
//! context starts it.

use camel_core::{RouteBuilder, RouteDefinition};
use serde_json::{json, Value as Json};

use crate::pattern::{mock_name, EndpointPattern};
use crate::steps::{self, Edit};
use crate::AdviceError;

/// Steps to weave in, written with the route builder: `|s| s.to("mock:audit")`.
pub trait Fragment: FnOnce(RouteBuilder) -> RouteBuilder {}
impl<F: FnOnce(RouteBuilder) -> RouteBuilder> Fragment for F {}

/// The edits of one route, applied in the order they are called.
///
/// Made by [`advice_with`](crate::advice_with); every method records its first error
/// there, and the route is only changed when all of them succeed.
#[derive(Debug)]
pub struct AdviceWith {
    route: RouteDefinition,
    items: Vec<Json>,
    error: Option<AdviceError>,
}

/// The steps a weave selected; say what to do with them.
#[derive(Debug)]
#[must_use = "a weave does nothing until replace, before, after or remove is called"]
pub struct Weave<'a> {
    advice: &'a mut AdviceWith,
    selector: Selector,
}

#[derive(Debug)]
enum Selector {
    Id(String),
    ToUri(EndpointPattern),
}

impl Selector {
    fn selects(&self, item: &Json) -> bool {
        match self {
            Selector::Id(id) => steps::id_of(item) == Some(id.as_str()),
            Selector::ToUri(pattern) => steps::to_uri(item).is_some_and(|u| pattern.matches(u)),
        }
    }

    fn describe(&self) -> String {
        match self {
            Selector::Id(id) => format!("weave_by_id({id:?})"),
            Selector::ToUri(p) => format!("weave_by_to_uri({:?})", p.text()),
        }
    }
}

impl AdviceWith {
    pub(crate) fn new(route: RouteDefinition) -> Self {
        let items = steps::to_items(&route.steps);
        AdviceWith {
            route,
            items,
            error: None,
        }
    }

    pub(crate) fn finish(mut self) -> Result<RouteDefinition, AdviceError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.route.steps = steps::from_items(self.items).map_err(|reason| AdviceError::Step {
            route: route_name(&self.route),
            reason,
        })?;
        Ok(self.route)
    }

    fn fail(&mut self, error: AdviceError) {
        self.error.get_or_insert(error);
    }

    /// The route's steps built by `fragment`, as items; its Rust processors and layers
    /// move to the route.
    fn fragment(&mut self, fragment: impl Fragment) -> Vec<Json> {
        let built = fragment(RouteBuilder::from("direct:advice")).build();
        self.route.processors.extend(built.processors);
        self.route.layers.extend(built.layers);
        steps::to_items(&built.steps)
    }

    /// Consumes from `uri` instead of the route's source (Camel's `replaceFromWith`): a
    /// `kafka:` or `sqs:` route is driven from `direct:` in a test.
    pub fn replace_from(&mut self, uri: impl Into<String>) -> &mut Self {
        self.route.from = camel_core::EndpointDefinition::new(uri);
        self
    }

    /// Sends a copy of every exchange bound for an endpoint matching `pattern` to
    /// `mock:URI` first (the URI without its query); the real endpoint is still called
    /// after it. Patterns: a URI, a glob (`sqs:*`, `http*:*`) or a regular expression.
    pub fn mock_endpoints(&mut self, pattern: &str) -> &mut Self {
        self.mock(pattern, false)
    }

    /// As [`mock_endpoints`](Self::mock_endpoints), but the real endpoint is not called:
    /// the mock takes its place (a test of a `kafka:` route needs no broker). A reply set
    /// on the mock with `when_any_exchange_received` stands in for the endpoint's answer.
    pub fn mock_endpoints_and_skip(&mut self, pattern: &str) -> &mut Self {
        self.mock(pattern, true)
    }

    fn mock(&mut self, pattern: &str, skip: bool) -> &mut Self {
        let pattern = match EndpointPattern::new(pattern) {
            Ok(p) => p,
            Err(e) => {
                self.fail(e);
                return self;
            }
        };
        steps::walk(&mut self.items, &mut |item| {
            let Some(uri) = steps::to_uri(item).filter(|u| pattern.matches(u)) else {
                return Edit::Keep;
            };
            let mock = json!({ "to": format!("mock:{}", mock_name(uri)) });
            if skip {
                // The step keeps its id, so a later weave_by_id still finds it.
                Edit::Splice(vec![with_id_of(item, mock)])
            } else {
                Edit::Splice(vec![mock, item.clone()])
            }
        });
        self
    }

    /// Selects the step whose node id is `id` (`- to: {id: send-order, …}`), at any
    /// depth.
    pub fn weave_by_id(&mut self, id: impl Into<String>) -> Weave<'_> {
        Weave {
            advice: self,
            selector: Selector::Id(id.into()),
        }
    }

    /// Selects every `to` step whose URI matches `pattern`.
    pub fn weave_by_to_uri(&mut self, pattern: &str) -> Weave<'_> {
        let selector = match EndpointPattern::new(pattern) {
            Ok(p) => Selector::ToUri(p),
            Err(e) => {
                self.fail(e);
                // Selects nothing; the pattern's error is the one reported.
                Selector::Id(String::new())
            }
        };
        Weave {
            advice: self,
            selector,
        }
    }

    /// Adds steps at the start of the route.
    pub fn weave_add_first(&mut self, fragment: impl Fragment) -> &mut Self {
        let items = self.fragment(fragment);
        self.items.splice(0..0, items);
        self
    }

    /// Adds steps at the end of the route (Camel's `weaveAddLast`): a final
    /// `to: mock:result` to see what the route produced.
    pub fn weave_add_last(&mut self, fragment: impl Fragment) -> &mut Self {
        let items = self.fragment(fragment);
        self.items.extend(items);
        self
    }
}

impl Weave<'_> {
    /// Puts the fragment's steps in place of each selected step.
    pub fn replace(self, fragment: impl Fragment) {
        self.apply(Some(fragment), |new, _old| new);
    }

    /// Puts the fragment's steps before each selected step.
    pub fn before(self, fragment: impl Fragment) {
        self.apply(Some(fragment), |mut new, old| {
            new.push(old);
            new
        });
    }

    /// Puts the fragment's steps after each selected step.
    pub fn after(self, fragment: impl Fragment) {
        self.apply(Some(fragment), |mut new, old| {
            new.insert(0, old);
            new
        });
    }

    /// Removes each selected step.
    pub fn remove(self) {
        self.apply(None::<fn(RouteBuilder) -> RouteBuilder>, |_, _| Vec::new());
    }

    fn apply(self, fragment: Option<impl Fragment>, place: impl Fn(Vec<Json>, Json) -> Vec<Json>) {
        let Weave { advice, selector } = self;
        let new = match fragment {
            Some(f) => advice.fragment(f),
            None => Vec::new(),
        };
        let edited = steps::walk(&mut advice.items, &mut |item| {
            if selector.selects(item) {
                Edit::Splice(place(new.clone(), item.clone()))
            } else {
                Edit::Keep
            }
        });
        if edited == 0 && advice.error.is_none() {
            let route = route_name(&advice.route);
            advice.fail(AdviceError::NoMatch {
                route,
                selector: selector.describe(),
            });
        }
    }
}

/// `mock` (a `{to: uri}` item) with the node id of `original`, if it has one.
fn with_id_of(original: &Json, mut mock: Json) -> Json {
    if let Some(id) = steps::id_of(original) {
        let uri = mock["to"].take();
        mock = json!({ "to": { "uri": uri, "id": id } });
    }
    mock
}

pub(crate) fn route_name(route: &RouteDefinition) -> String {
    route.id.clone().unwrap_or_else(|| "<no id>".to_string())
}
