//! Why an advice could not be applied.

/// A failed [`advice_with`](crate::advice_with): the route was left unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdviceError {
    /// No route has this id.
    #[error("no route `{route}` to advise (routes: {known})")]
    NoRoute {
        /// The id asked for.
        route: String,
        /// The ids there are, comma-separated.
        known: String,
    },
    /// A weave selected no step: the id or URI is misspelt, or the step is gone.
    #[error("route `{route}`: {selector} matches no step")]
    NoMatch {
        /// The route's id (`<no id>` when it has none).
        route: String,
        /// What selected the steps (`weave_by_id(\"x\")`).
        selector: String,
    },
    /// An endpoint pattern cannot be read.
    #[error("endpoint pattern `{pattern}`: {reason}")]
    Pattern {
        /// The pattern as written.
        pattern: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// The advised steps no longer read as steps.
    #[error("route `{route}`: {reason}")]
    Step {
        /// The route's id.
        route: String,
        /// Why.
        reason: String,
    },
}
