use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use std::sync::Arc;

use crate::{Body, CamelError, Headers, Message, Value};

/// Whether the caller of a route waits for a reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExchangePattern {
    /// Fire and forget: nobody reads the final message.
    #[default]
    InOnly,
    /// Request-reply: the caller reads the final message.
    InOut,
}

/// A process-local exchange id.
///
/// Made from a per-process prefix and an atomic counter: unique within the process and
/// practically across processes, and far cheaper than a random UUID per exchange (which
/// costs a system call). It prints as `ID-<prefix>-<n>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(u64);

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn process_prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        format!("{:x}{:x}", std::process::id(), nanos & 0xffff_ffff)
    })
}

impl ExchangeId {
    /// The next id of this process.
    pub fn next() -> Self {
        ExchangeId(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }

    /// The counter part of the id.
    pub fn sequence(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ExchangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ID-{}-{}", process_prefix(), self.0)
    }
}

/// One message travelling through a route, with the properties the route attaches to it.
///
/// Cloning is cheap (payload and values are reference counted); EIPs that fan out clone.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The exchange id.
    pub id: ExchangeId,
    /// InOnly or InOut.
    pub pattern: ExchangePattern,
    /// The current message.
    pub message: Message,
    /// Properties: route-scoped values that are not part of the message.
    pub properties: Headers,
    stopped: bool,
    /// Error handling state (ADR 0052); one pointer, absent on the happy path, so the
    /// exchange stays small and cheap to clone.
    errors: Option<Arc<ErrorState>>,
    /// Exchange variables (`set_variable`): absent until the first one is set, so
    /// exchanges without variables carry one empty pointer; shared copy-on-write, so a
    /// fan-out clone copies nothing until a branch changes a variable.
    variables: Option<Arc<Headers>>,
}

/// What error handling keeps on an exchange.
#[derive(Clone, Debug, Default)]
struct ErrorState {
    /// The error an error handler or `on_exception` caught, for `${exception…}`.
    caught: Option<Arc<CamelError>>,
    /// The message as it entered the route, kept only when a handler asks for
    /// `use_original_message`.
    original: Option<Arc<Message>>,
}

impl Exchange {
    /// A new InOnly exchange carrying `body`.
    pub fn new(body: impl Into<Body>) -> Self {
        Self::from_message(Message::new(body))
    }

    /// A new InOnly exchange carrying `message`.
    pub fn from_message(message: Message) -> Self {
        Exchange {
            id: ExchangeId::next(),
            pattern: ExchangePattern::InOnly,
            message,
            properties: Headers::new(),
            stopped: false,
            errors: None,
            variables: None,
        }
    }

    /// A new exchange carrying `message` under `original`'s id and pattern, with nothing
    /// else of either (no properties, variables or error state): how an EIP that merged
    /// replies (multicast, recipient list) hands its result back to the route. Unlike
    /// [`Exchange::from_message`] it takes no new id, so no shared counter is touched.
    pub fn continuing(original: &Exchange, message: Message) -> Self {
        Exchange {
            id: original.id,
            pattern: original.pattern,
            message,
            properties: Headers::new(),
            stopped: false,
            errors: None,
            variables: None,
        }
    }

    /// Builder-style: sets a header.
    pub fn with_header(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.message.headers.insert(name, value);
        self
    }

    /// Builder-style: sets the pattern.
    pub fn with_pattern(mut self, pattern: ExchangePattern) -> Self {
        self.pattern = pattern;
        self
    }

    /// A header of the current message.
    pub fn header(&self, name: &str) -> Option<&Value> {
        self.message.headers.get(name)
    }

    /// An exchange property.
    pub fn property(&self, name: &str) -> Option<&Value> {
        self.properties.get(name)
    }

    /// Marks the exchange as stopped: no later step of the route runs for it.
    ///
    /// A stop is a control signal, not a failure: the route completes successfully.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// True once [`Exchange::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }
}

// --- variables (see `crate::variables` for the global scope) ---
impl Exchange {
    /// An exchange variable.
    pub fn variable(&self, name: &str) -> Option<&Value> {
        self.variables.as_deref().and_then(|v| v.get(name))
    }

    /// Every exchange variable (empty when none was set).
    pub fn variables(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.variables.as_deref().into_iter().flat_map(|v| v.iter())
    }

    /// Sets an exchange variable.
    pub fn set_variable(&mut self, name: &str, value: impl Into<Value>) {
        Arc::make_mut(self.variables.get_or_insert_with(Default::default)).insert(name, value);
    }

    /// Removes an exchange variable.
    pub fn remove_variable(&mut self, name: &str) {
        if let Some(v) = self.variables.as_mut() {
            if v.contains(name) {
                Arc::make_mut(v).remove(name);
            }
        }
    }
}

// --- error handling (ADR 0052) ---
impl Exchange {
    /// The error caught by an error handler, `on_exception` or `do_catch`.
    pub fn caught_error(&self) -> Option<&Arc<CamelError>> {
        self.errors.as_ref().and_then(|e| e.caught.as_ref())
    }

    fn errors_mut(&mut self) -> &mut ErrorState {
        Arc::make_mut(self.errors.get_or_insert_with(Default::default))
    }

    /// Records (or clears) the caught error.
    pub fn set_caught_error(&mut self, error: Option<Arc<CamelError>>) {
        self.errors_mut().caught = error;
    }

    /// The message as it entered the route, when it was kept.
    pub fn original_message(&self) -> Option<&Arc<Message>> {
        self.errors.as_ref().and_then(|e| e.original.as_ref())
    }

    /// Keeps the message as it entered the route.
    pub fn set_original_message(&mut self, message: Option<Arc<Message>>) {
        self.errors_mut().original = message;
    }

    /// Undoes [`Exchange::stop`]: a `continued` failure goes on with the route.
    pub fn resume(&mut self) {
        self.stopped = false;
    }
}

impl Default for Exchange {
    fn default() -> Self {
        Exchange::new(Body::Empty)
    }
}
