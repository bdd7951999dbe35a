//! `stream:out` / `stream:err`: write each body, then a line break.

use std::io::Write;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};

use super::Output;

#[derive(Clone, Debug)]
pub(super) struct WriteOptions {
    pub(super) delay: std::time::Duration,
    pub(super) append_new_line: bool,
}

/// The producer writing to `out`.
pub(super) fn producer(out: Output, options: WriteOptions) -> BoxProcessor {
    BoxProcessor::from_fn(move |exchange: Exchange| {
        let out = out.clone();
        let options = options.clone();
        async move {
            if !options.delay.is_zero() {
                tokio::time::sleep(options.delay).await;
            }
            let bytes = bytes_of(&exchange.message.body);
            if let Some(mut bytes) = bytes {
                if options.append_new_line {
                    bytes.push(b'\n');
                }
                // A pipe that is full blocks the write: off the worker's other tasks.
                camel_api::blocking::in_place(|| write(&out, &bytes))?;
            }
            Ok(exchange)
        }
    })
    .named("stream")
}

/// The bytes of a body; `None` for an empty body, which writes nothing.
fn bytes_of(body: &Body) -> Option<Vec<u8>> {
    match body {
        Body::Empty => None,
        Body::Bytes(b) => Some(b.to_vec()),
        Body::Text(t) => Some(t.as_bytes().to_vec()),
        Body::Json(j) => Some(j.to_string().into_bytes()),
    }
}

fn write(out: &Output, bytes: &[u8]) -> Result<(), CamelError> {
    let mut out = out
        .lock()
        .map_err(|_| CamelError::processor("a previous write to the stream panicked"))?;
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| CamelError::external("stream", e))
}
