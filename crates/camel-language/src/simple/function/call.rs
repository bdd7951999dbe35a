//! The `${name(args)}` functions: text, condition, list and math functions.
//!
//! Most take an optional last value that defaults to the message body (`${uppercase()}`
//! upper-cases the body, `${uppercase(${header.x})}` a header); the table in
//! `docs/languages.md` gives each one's arguments, in Camel's order.

use super::args::Arg;
use super::{call_parse, lists, query, text};
use crate::problem::Problem;

/// A function with one optional value (the body by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unary {
    Uppercase,
    Lowercase,
    Trim,
    Capitalize,
    NormalizeWhitespace,
    Quote,
    Unquote,
    Length,
    Size,
    IsEmpty,
    IsAlpha,
    IsNumeric,
    IsAlphaNumeric,
    KindOfType,
    Abs,
    Floor,
    Ceil,
    SafeQuote,
    ToJson,
    ToPrettyJson,
    Pretty,
}

/// `sum`, `max`, `min`, `average` over integral numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aggregate {
    Sum,
    Max,
    Min,
    Average,
}

/// A resolved call. `None` as a source means the message body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    Unary(Unary, Option<Arg>),
    Contains(Option<Arg>, Arg),
    SubstringBefore(Option<Arg>, Arg),
    SubstringAfter(Option<Arg>, Arg),
    SubstringBetween(Option<Arg>, Arg, Arg),
    Substring {
        head: Arg,
        tail: Option<Arg>,
        source: Option<Arg>,
    },
    Replace {
        from: Arg,
        to: Arg,
        source: Option<Arg>,
    },
    Concat(Arg, Arg, Option<Arg>),
    Join {
        separator: Option<Arg>,
        prefix: Option<Arg>,
        source: Option<Arg>,
    },
    Split {
        source: Option<Arg>,
        separator: Option<Arg>,
    },
    Iif(Arg, Arg, Arg),
    Not(Option<Arg>),
    Aggregate(Aggregate, Box<[Arg]>),
    Random(Arg, Arg),
    Range(Arg, Arg),
    Empty(Empty),
    Pad {
        source: Arg,
        width: Arg,
        filler: Option<Arg>,
    },
    Escape(text::Escape, Option<Arg>),
    /// `${hash([value])}`: SHA-256 of the text, in hex.
    Hash(Option<Arg>),
    /// `${list(…)}`, `${reverse(…)}`, `${distinct(…)}`, `${shuffle(…)}`.
    List(lists::ListOp, Box<[Arg]>),
    /// `${sort([value][,descending])}`.
    Sort(Option<Arg>, Option<Arg>),
    /// `${jsonpath(path)}` on the body, `${jsonpath(header:doc,path)}` on a value.
    JsonPath(Option<Arg>, query::Query),
    /// `${jq(filter)}` on the body, `${jq(header:doc,filter)}` on a value.
    Jq(Option<Arg>, query::Query),
}

/// What `${createEmpty(kind)}` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Empty {
    Text,
    List,
    Map,
}

/// The functions with one optional value.
const UNARY: &[(&str, Unary)] = &[
    ("uppercase", Unary::Uppercase),
    ("lowercase", Unary::Lowercase),
    ("trim", Unary::Trim),
    ("capitalize", Unary::Capitalize),
    ("normalizeWhitespace", Unary::NormalizeWhitespace),
    ("quote", Unary::Quote),
    ("unquote", Unary::Unquote),
    ("safeQuote", Unary::SafeQuote),
    ("length", Unary::Length),
    ("size", Unary::Size),
    ("isEmpty", Unary::IsEmpty),
    ("isAlpha", Unary::IsAlpha),
    ("isNumeric", Unary::IsNumeric),
    ("isAlphaNumeric", Unary::IsAlphaNumeric),
    ("kindOfType", Unary::KindOfType),
    ("abs", Unary::Abs),
    ("floor", Unary::Floor),
    ("ceil", Unary::Ceil),
    ("toJson", Unary::ToJson),
    ("toPrettyJson", Unary::ToPrettyJson),
    ("pretty", Unary::Pretty),
];

/// The other call functions.
const OTHERS: &[&str] = &[
    "contains",
    "substringBefore",
    "substringAfter",
    "substringBetween",
    "substring",
    "replace",
    "concat",
    "join",
    "split",
    "pad",
    "escape",
    "iif",
    "not",
    "sum",
    "max",
    "min",
    "average",
    "random",
    "range",
    "createEmpty",
    "empty",
    "jsonpath",
    "jq",
    "hash",
    "list",
    "reverse",
    "distinct",
    "shuffle",
    "sort",
];

/// Every call function's name, for suggestions.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    UNARY.iter().map(|(n, _)| *n).chain(OTHERS.iter().copied())
}

/// Whether `name` is a call function.
pub(crate) fn is_name(name: &str) -> bool {
    names().any(|n| n == name)
}

/// `${toJsonBody}` and `${toPrettyJsonBody}`: the body forms written without parentheses.
pub(crate) fn parse_bare(name: &str) -> Option<Call> {
    match name {
        "toJsonBody" => Some(Call::Unary(Unary::ToJson, None)),
        "toPrettyJsonBody" => Some(Call::Unary(Unary::ToPrettyJson, None)),
        _ => None,
    }
}

/// Resolves `name(inner)`; `None` when `name` is not a call function.
pub(crate) fn parse(
    name: &str,
    at: usize,
    inner: &str,
    inner_at: usize,
) -> Option<Result<Call, Problem>> {
    if !is_name(name) {
        return None;
    }
    let unary = UNARY.iter().find(|(n, _)| *n == name).map(|(_, u)| *u);
    Some(call_parse::parse_known(name, unary, at, inner, inner_at))
}
