//! The typed configuration of each EIP step: the one parser of its options.
//!
//! Every struct here is what a route writes under the step's name, in YAML or through the
//! builder (`camel_core::builder` serialises these same values). Keys are snake_case;
//! Camel's camelCase spellings are serde aliases; unknown keys are refused, and the route
//! compiler reports serde's errors with the file, line and column and the nearest known
//! key. Nested step lists stay as [`StepDefinition`]s: each nested step is parsed by its
//! own configuration when it is compiled.
//!
//! ```
//! use camel_api::definition::{StepConfig, WithExpression};
//! use camel_eip::config::Filter;
//!
//! let f: Filter = serde_json::from_value(serde_json::json!({
//!     "simple": "${header.kind} == 'gold'",
//!     "steps": [{"to": "log:gold"}],
//! })).unwrap();
//! assert_eq!(Filter::NAME, "filter");
//! assert_eq!(f.expression().unwrap().1.language, "simple");
//! assert_eq!(f.steps[0].name, "to");
//! ```
//!
//! [`StepDefinition`]: camel_api::definition::StepDefinition

mod aggregate;
mod balance;
mod circuit_breaker;
mod claim_check;
mod data;
mod dynamic;
mod enrich;
mod errors;
mod exchange;
mod looping;
mod message;
mod multicast;
mod policy;
mod resequence;
mod routing;
mod schema;
mod split;
mod throttle;
mod transacted;
mod variable;
mod wire_tap;

pub use aggregate::{Aggregate, IdempotentConsumer};
pub use balance::{
    Correlation, CustomBalancer, FailoverBalancer, LoadBalance, NoOptions, StickyBalancer,
    WeightedBalancer,
};
pub use circuit_breaker::{
    CircuitBreaker, OnFallback, Resilience4jConfiguration, SlidingWindowType,
};
pub use claim_check::{ClaimCheck, ClaimCheckOperation};
pub use data::{
    Base64Format, ConvertBodyTo, CsvFormat, DataFormat, GzipFormat, JsonFormat, JsonMarshal,
    JsonUnmarshal, Marshal, Unmarshal, XmlFormat, ZipFileFormat, ZipFormat, DATA_FORMAT_NAMES,
};
pub use dynamic::{DynamicRouter, RecipientList, RoutingSlip, ToD};
pub use enrich::{Enrich, PollEnrich};
pub use errors::{
    DeadLetterChannel, DefaultErrorHandler, DoCatch, DoFinally, DoTry, ErrorHandlerConfig,
    NoErrorHandler, OnCompletionConfig, OnException, PredicateOption, RedeliveryPolicyConfig,
    ThrowException,
};
pub use exchange::{ConvertHeaderTo, Pattern, SetExchangePattern, Step, Validate};
pub use looping::{Loop, Sort};
pub use message::{
    Log, RemoveHeader, RemoveHeaders, RemoveProperty, SetBody, SetHeader, SetHeaders, SetProperty,
    Stop,
};
pub use multicast::{Multicast, Strategy};
pub use policy::Policy;
pub use resequence::Resequence;
pub use routing::{Choice, Filter, Otherwise, When};
pub use split::{Split, Tokenize};
pub use throttle::{Delay, Sample, Throttle};
pub use transacted::Transacted;
pub use variable::{ConvertVariableTo, RemoveVariable, SetVariable, SetVariables};
pub use wire_tap::{OnPrepare, WireTap, DEFAULT_TAP_CONCURRENCY, DEFAULT_TAP_QUEUE};
