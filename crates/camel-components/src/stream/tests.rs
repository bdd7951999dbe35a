use std::io::Write;
use std::sync::Mutex;

use camel_api::{Body, BoxProcessor, ConsumerContext, Exchange, Value};

use super::*;
use crate::testing::FakeContext;

/// A writer whose bytes the test can read.
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

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

struct Streams {
    component: StreamComponent,
    out: Captured,
    err: Captured,
}

fn streams(input: &'static [u8]) -> Streams {
    let (out, err) = (Captured::default(), Captured::default());
    Streams {
        component: StreamComponent::with_streams(input, out.clone(), err.clone()),
        out,
        err,
    }
}

fn endpoint(component: &StreamComponent, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
    component.endpoint(EndpointUri::parse(uri)?, &FakeContext)
}

/// Runs `stream:in…` to the end of its input; the exchanges it sent.
async fn read_all(s: &Streams, uri: &str) -> Vec<Exchange> {
    let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock().unwrap().push(ex.clone());
        Ok(ex)
    });
    let ep = endpoint(&s.component, uri).unwrap();
    let ctx = ConsumerContext::for_pipeline("in", pipeline);
    ep.consumer().unwrap().run(ctx).await.unwrap();
    let seen = seen.lock().unwrap();
    seen.clone()
}

fn bodies(exchanges: &[Exchange]) -> Vec<String> {
    exchanges
        .iter()
        .map(|e| e.message.body.as_text().unwrap_or_default().into_owned())
        .collect()
}

#[tokio::test]
async fn out_and_err_write_the_body_and_a_line_break() {
    let s = streams(b"");
    for (uri, body) in [
        ("stream:out", "one"),
        ("stream:err", "two"),
        ("stream:out", "three"),
    ] {
        let p = endpoint(&s.component, uri).unwrap().producer().unwrap();
        let out = p.process(Exchange::new(body)).await.unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some(body));
    }
    let p = endpoint(&s.component, "stream:out?appendNewLine=false")
        .unwrap()
        .producer()
        .unwrap();
    p.process(Exchange::new("no break")).await.unwrap();
    p.process(Exchange::new(serde_json::json!({"a": 1})))
        .await
        .unwrap();
    // An empty body writes nothing, not even the line break.
    p.process(Exchange::default()).await.unwrap();
    assert_eq!(s.out.text(), "one\nthree\nno break{\"a\":1}");
    assert_eq!(s.err.text(), "two\n");
}

#[tokio::test]
async fn in_sends_one_exchange_per_line_with_index_and_complete() {
    let s = streams(b"first\r\nsecond\n\nlast");
    let got = read_all(&s, "stream:in").await;
    assert_eq!(bodies(&got), ["first", "second", "", "last"]);
    let index: Vec<i64> = got
        .iter()
        .filter_map(|e| e.header(STREAM_INDEX)?.as_i64())
        .collect();
    assert_eq!(index, [0, 1, 2, 3]);
    // Standard input is not read ahead, so every line says complete, as in Camel.
    assert!(got
        .iter()
        .all(|e| e.header(STREAM_COMPLETE) == Some(&Value::Bool(true))));
}

#[tokio::test]
async fn group_lines_joins_lines_and_flushes_the_rest_at_the_end() {
    let s = streams(b"a\nb\nc\nd\ne\n");
    let got = read_all(&s, "stream:in?groupLines=2").await;
    assert_eq!(bodies(&got), ["a\nb", "c\nd", "e"]);
    let complete: Vec<_> = got
        .iter()
        .map(|e| e.header(STREAM_COMPLETE).cloned())
        .collect();
    assert_eq!(
        complete,
        [
            Some(Value::Bool(false)),
            Some(Value::Bool(false)),
            Some(Value::Bool(true))
        ]
    );
}

#[tokio::test]
async fn bytes_that_are_not_utf8_stay_bytes() {
    let s = streams(b"\xff\xfe\n");
    let got = read_all(&s, "stream:in").await;
    assert!(matches!(&got[0].message.body, Body::Bytes(b) if b.as_ref() == b"\xff\xfe"));
}

#[tokio::test(start_paused = true)]
async fn prompt_and_delays() {
    let s = streams(b"x\ny\n");
    let start = tokio::time::Instant::now();
    let got = read_all(
        &s,
        "stream:in?promptMessage=Enter:%20&initialPromptDelay=100&promptDelay=10&delay=5",
    )
    .await;
    assert_eq!(bodies(&got), ["x", "y"]);
    // 100 (first prompt) + 5 + 10 + 5 + 10 (the prompt before the end).
    assert_eq!(start.elapsed().as_millis(), 130);
    assert_eq!(s.out.text(), "Enter: Enter: Enter: ");
}

#[tokio::test(start_paused = true)]
async fn out_waits_its_delay_before_writing() {
    let s = streams(b"");
    let p = endpoint(&s.component, "stream:out?delay=250")
        .unwrap()
        .producer()
        .unwrap();
    let start = tokio::time::Instant::now();
    p.process(Exchange::new("later")).await.unwrap();
    assert_eq!(start.elapsed().as_millis(), 250);
    assert_eq!(s.out.text(), "later\n");
}

#[test]
fn what_is_not_supported_says_so() {
    let s = streams(b"");
    let err = |uri: &str| endpoint(&s.component, uri).unwrap_err().to_string();
    assert!(err("stream:file?fileName=a.txt").contains("does not support yet"));
    assert!(err("stream:in?scanStream=true").contains("scan_stream"));
    assert!(err("stream:in?encoding=ISO-8859-1").contains("only UTF-8"));
    assert!(err("stream:in?readLine=false").contains("read_line=false"));
    assert!(err("stream:sideways").contains("unknown stream kind"));
    assert!(err("stream:").contains("needs a kind"));
    assert!(err("stream:out?appendNewline=true").contains("did you mean `appendNewLine`"));
    assert!(endpoint(&s.component, "stream:in?encoding=UTF-8").is_ok());
    assert!(endpoint(&s.component, "stream:in")
        .unwrap()
        .producer()
        .is_err());
    assert!(endpoint(&s.component, "stream:out")
        .unwrap()
        .consumer()
        .is_err());
}
