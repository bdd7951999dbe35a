//! Measures how long evaluating typical simple expressions takes.
//!
//! Run with `cargo run --release -p camel-rs-language --example evaluate`; prints one
//! line per expression with nanoseconds per evaluation.

use std::hint::black_box;
use std::time::Instant;

use camel_api::Exchange;
use camel_language::{simple, simple_predicate};

const ROUNDS: u32 = 2_000_000;

fn main() -> Result<(), camel_api::ExpressionError> {
    let ex = Exchange::new("payload")
        .with_header("x", "gold")
        .with_header("n", 42)
        .with_header("a", 1)
        .with_header("b", 2);
    let start = Instant::now();
    for _ in 0..ROUNDS {
        black_box(black_box(&ex).header("x").cloned());
    }
    report("(baseline: a hand-written header clone)", start);
    for text in [
        "${header.x}",
        "${body}",
        "Hello ${body} from ${header.x}",
        "constant text",
    ] {
        let expression = simple(text)?;
        let start = Instant::now();
        for _ in 0..ROUNDS {
            black_box(expression.evaluate(black_box(&ex)).ok());
        }
        report(text, start);
    }
    for text in [
        "${header.n} > 10",
        "${header.x} == 'gold' && ${header.n} >= 42",
        "${header.x} in 'bronze,silver,gold'",
        "${body} regex 'pay.*'",
    ] {
        let predicate = simple_predicate(text)?;
        let start = Instant::now();
        for _ in 0..ROUNDS {
            black_box(predicate.matches(black_box(&ex)).ok());
        }
        report(text, start);
    }
    Ok(())
}

fn report(text: &str, start: Instant) {
    let ns = start.elapsed().as_nanos() as f64 / f64::from(ROUNDS);
    println!("{ns:8.1} ns  {text}");
}
