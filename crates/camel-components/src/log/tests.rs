use std::io::Write;
use std::sync::{Arc, Mutex};

use camel_api::{Body, ExchangePattern};
use tracing_subscriber::fmt::MakeWriter;

use super::*;
use crate::testing::endpoint;

/// Collects everything the fmt subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// Sends `exchange` to `uri` with a subscriber at `max` and returns (output, log text).
fn log(uri: &str, max: Level, exchange: Exchange) -> (Exchange, String) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_ansi(false)
        .with_max_level(max)
        .finish();
    let producer = endpoint(&LogComponent, uri).unwrap().producer().unwrap();
    let future = tracing::subscriber::with_default(subscriber, || producer.process(exchange));
    let camel_api::ProcessorFuture::Ready(Some(out)) = future else {
        panic!("the log producer must complete synchronously");
    };
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    (out.unwrap(), text)
}

fn sample() -> Exchange {
    let mut ex = Exchange::new("hello").with_header("id", 7);
    ex.properties.insert("p", "v");
    ex
}

#[test]
fn logs_body_and_type_at_info_by_default_and_returns_the_exchange_unchanged() {
    let (out, text) = log("log:orders", Level::INFO, sample());
    assert!(text.contains(" INFO "), "{text}");
    assert!(
        text.contains("Exchange[BodyType: Text, Body: hello]"),
        "{text}"
    );
    assert!(text.contains("logger=orders"), "{text}");
    assert!(!text.contains("id=7"), "{text}");
    assert_eq!(out.message, sample().message);
}

#[test]
fn shows_headers_when_asked() {
    let (_, text) = log(
        "log:o?showHeaders=true&showBody=false",
        Level::INFO,
        sample(),
    );
    assert!(
        text.contains("Exchange[Headers: {id=7}, BodyType: Text]"),
        "{text}"
    );
}

#[test]
fn show_all_shows_everything() {
    let ex = sample().with_pattern(ExchangePattern::InOut);
    let id = ex.id;
    let (_, text) = log("log:o?show_all=true", Level::INFO, ex);
    for part in [
        format!("Id: {id}"),
        "ExchangePattern: InOut".to_string(),
        "Properties: {p=v}".to_string(),
        "Headers: {id=7}".to_string(),
        "Body: hello".to_string(),
    ] {
        assert!(text.contains(&part), "missing {part} in {text}");
    }
}

#[test]
fn respects_the_level() {
    let (_, text) = log("log:o?level=DEBUG", Level::INFO, sample());
    assert!(text.is_empty(), "{text}");
    let (_, text) = log("log:o?level=warn", Level::INFO, sample());
    assert!(text.contains(" WARN "), "{text}");
    let (_, text) = log("log:o?level=OFF", Level::TRACE, sample());
    assert!(text.is_empty(), "{text}");
}

#[test]
fn clips_long_bodies_and_joins_lines() {
    let (_, text) = log("log:o?maxChars=5", Level::INFO, Exchange::new("abcdefgh"));
    assert!(
        text.contains("Body: abcde... [Body clipped after 5 chars]"),
        "{text}"
    );
    let (_, text) = log("log:o", Level::INFO, Exchange::new("one\ntwo"));
    assert!(text.contains("Body: one two]"), "{text}");
    let (_, text) = log("log:o", Level::INFO, Exchange::new(Body::Empty));
    assert!(
        text.contains("BodyType: Empty, Body: [Body is null]"),
        "{text}"
    );
}

#[test]
fn multiline_puts_each_part_on_its_own_line() {
    let (_, text) = log(
        "log:o?multiline=true&showHeaders=true",
        Level::INFO,
        sample(),
    );
    assert!(
        text.contains("Exchange[\n  Headers: {id=7}\n  BodyType: Text\n  Body: hello\n]"),
        "{text}"
    );
    // Without it, one line as before.
    let (_, text) = log("log:o?multiline=false", Level::INFO, sample());
    assert!(
        text.contains("Exchange[BodyType: Text, Body: hello]"),
        "{text}"
    );
}

#[test]
fn rejects_bad_options_and_cannot_consume() {
    let err = endpoint(&LogComponent, "log:o?level=loud")
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected one of"), "{err}");
    let err = endpoint(&LogComponent, "log:o?showHeader=true")
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean `showHeaders`"), "{err}");
    assert!(endpoint(&LogComponent, "log:o")
        .unwrap()
        .consumer()
        .is_err());
}
