//! Errors of loading and compiling routes: each says where (file, line, column, route,
//! step) and why.

use std::fmt;
use std::sync::Arc;

use camel_api::{CamelError, ExpressionError};

/// A position in a route file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file (or a name given to a string source).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// What went wrong with a route definition.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RouteErrorKind {
    /// The file is not valid YAML.
    #[error("invalid YAML: {0}")]
    Syntax(String),
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(Arc<std::io::Error>),
    /// A key that this place does not accept.
    #[error("unknown key `{key}`{}", hint(.key, .suggestion, .expected))]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The nearest valid key, if one is close.
        suggestion: Option<String>,
        /// The valid keys here.
        expected: Vec<String>,
    },
    /// A value of the wrong type or form.
    #[error("{0}")]
    InvalidValue(String),
    /// A required key is missing.
    #[error("missing `{0}`")]
    Missing(String),
    /// A route without `from`.
    #[error("the route has no `from`")]
    MissingFrom,
    /// Two routes share an id.
    #[error("duplicate route id `{id}`{}", first.as_ref().map(|l| format!(" (first defined at {l})")).unwrap_or_default())]
    DuplicateRouteId {
        /// The id.
        id: String,
        /// Where the first route with this id is.
        first: Option<Location>,
    },
    /// An expression that does not parse.
    #[error(transparent)]
    Expression(ExpressionError),
    /// A URI whose scheme has no component.
    #[error("{0}")]
    UnknownComponent(CamelError),
    /// An endpoint that rejected its URI or parameters.
    #[error("{0}")]
    Endpoint(CamelError),
    /// A structural rule of the route compiler (N2, N3, N4 …).
    #[error("{rule}: {message}")]
    Rejected {
        /// The rule's name.
        rule: &'static str,
        /// Why.
        message: String,
    },
    /// No route with this id.
    #[error("no route with id `{0}`")]
    NoSuchRoute(String),
    /// A route cannot start while the context is stopping.
    #[error("route `{0}` cannot start: the context is stopping")]
    ContextStopping(String),
    /// A lifecycle step failed to start or stop.
    #[error("{0}")]
    Lifecycle(CamelError),
    /// A property placeholder that could not be resolved.
    #[error(transparent)]
    Property(crate::properties::PropertyError),
}

/// Drops the errors found at the place of an unresolved property placeholder: the
/// placeholder's text stood there in place of its value, so what else was said about that
/// value (not a number, no such component) follows from it. Keeps the order of the rest.
pub fn drop_shadowed(errors: &mut Vec<RouteError>) {
    let shadowing: Vec<Location> = errors
        .iter()
        .filter(|e| matches!(e.kind, RouteErrorKind::Property(_)))
        .filter_map(|e| e.location.clone())
        .collect();
    // The placeholders themselves, as an endpoint quotes a value it was given.
    let texts: Vec<String> = errors
        .iter()
        .filter_map(|e| match &e.kind {
            RouteErrorKind::Property(p) => p.placeholder(),
            _ => None,
        })
        .collect();
    errors.retain(|e| {
        if matches!(e.kind, RouteErrorKind::Property(_)) {
            return true;
        }
        let here = e.location.as_ref().is_some_and(|l| shadowing.contains(l));
        let quoted = !texts.is_empty() && {
            let message = e.kind.to_string();
            texts.iter().any(|t| message.contains(t.as_str()))
        };
        !here && !quoted
    });
}

/// The suggestion or the keys expected, in the spelling of the unknown `key` when it
/// shows one (`clientResponseValidation` gets `clientRequestValidation`).
fn hint(key: &str, suggestion: &Option<String>, expected: &[String]) -> String {
    let spell = |name: &str| match camel_api::suggest::Spelling::of(key) {
        Some(spelling) if !name.contains(['.', ' ', '`']) => {
            spelling.spell(&camel_api::suggest::to_snake_case(name))
        }
        _ => name.to_string(),
    };
    match suggestion {
        Some(s) => format!(" (did you mean `{}`?)", spell(s)),
        None if !expected.is_empty() && expected.len() <= 12 => {
            let names: Vec<String> = expected.iter().map(|e| spell(e)).collect();
            format!(" (expected one of: {})", names.join(", "))
        }
        None => String::new(),
    }
}

impl RouteErrorKind {
    /// An unknown key's suggestion and expected keys respelt in `spelling` (the file's)
    /// when the key itself does not show one (`precondition`); other kinds unchanged.
    pub fn spelt(self, spelling: camel_api::suggest::Spelling) -> Self {
        match self {
            RouteErrorKind::UnknownKey {
                key,
                suggestion,
                expected,
            } if camel_api::suggest::Spelling::of(&key).is_none() => {
                let spell = |name: String| {
                    if name.contains(['.', ' ', '`']) {
                        name
                    } else {
                        spelling.spell(&camel_api::suggest::to_snake_case(&name))
                    }
                };
                RouteErrorKind::UnknownKey {
                    key,
                    suggestion: suggestion.map(spell),
                    expected: expected.into_iter().map(spell).collect(),
                }
            }
            other => other,
        }
    }
}

/// An error in a route definition, with its location when known.
#[derive(Clone, Debug)]
pub struct RouteError {
    /// What went wrong.
    pub kind: RouteErrorKind,
    /// Where in the file.
    pub location: Option<Location>,
    /// The route's id.
    pub route_id: Option<String>,
    /// The step, as a path (`steps[2].filter.steps[0].set_header`).
    pub step: Option<String>,
}

impl RouteError {
    /// An error of `kind` with nothing else known yet.
    pub fn new(kind: RouteErrorKind) -> Self {
        RouteError {
            kind,
            location: None,
            route_id: None,
            step: None,
        }
    }

    /// Adds a location (unless one is already set).
    pub fn at(mut self, location: Option<Location>) -> Self {
        if self.location.is_none() {
            self.location = location;
        }
        self
    }

    /// Adds the route id (unless one is already set).
    pub fn in_route(mut self, id: Option<&str>) -> Self {
        if self.route_id.is_none() {
            self.route_id = id.map(str::to_string);
        }
        self
    }

    /// Adds the step path (unless one is already set).
    pub fn in_step(mut self, step: Option<String>) -> Self {
        if self.step.is_none() {
            self.step = step;
        }
        self
    }
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        if let Some(id) = &self.route_id {
            write!(f, "route `{id}`: ")?;
        }
        if let Some(step) = &self.step {
            write!(f, "at {step}: ")?;
        }
        // One error, one line: a multi-line message (a parser's caret drawing, a newline
        // in an expression) would leave lines without the location in front.
        let text = self.kind.to_string();
        if text.contains(['\n', '\r']) {
            write!(f, "{}", text.replace('\r', "\\r").replace('\n', "\\n"))
        } else {
            f.write_str(&text)
        }
    }
}

impl std::error::Error for RouteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}

impl From<RouteErrorKind> for RouteError {
    fn from(kind: RouteErrorKind) -> Self {
        RouteError::new(kind)
    }
}

/// Several route errors, reported together (a file can have many mistakes).
#[derive(Clone, Debug)]
pub struct RouteErrors(pub Vec<RouteError>);

impl fmt::Display for RouteErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RouteErrors {}

impl From<RouteError> for RouteErrors {
    fn from(e: RouteError) -> Self {
        RouteErrors(vec![e])
    }
}
