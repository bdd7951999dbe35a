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

mod data;
mod errors;
mod message;
mod multicast;
mod resequence;
mod routing;
mod transacted;
mod variable;

pub use data::{
    Base64Format, ConvertBodyTo, CsvFormat, DataFormat, GzipFormat, JsonFormat, JsonMarshal,
    JsonUnmarshal, Marshal, Unmarshal, XmlFormat, ZipFormat, DATA_FORMAT_NAMES,
};
pub use errors::{
    DeadLetterChannel, DefaultErrorHandler, DoCatch, DoFinally, DoTry, ErrorHandlerConfig,
    NoErrorHandler, OnCompletionConfig, OnException, PredicateOption, RedeliveryPolicyConfig,
    ThrowException,
};
pub use message::{
    Log, RemoveHeader, RemoveHeaders, RemoveProperty, SetBody, SetHeader, SetProperty, Stop,
};
pub use multicast::{Multicast, Strategy};
pub use resequence::Resequence;
pub use routing::{Choice, Filter, Otherwise, When};
pub use transacted::Transacted;
pub use variable::{ConvertVariableTo, RemoveVariable, SetVariable, SetVariables};
