//! The lines of an input stream (the process's standard input), read on a thread of
//! their own and handed to whichever `stream:in` consumer asks next.
//!
//! Reading standard input blocks until a line arrives, possibly forever; on tokio's
//! blocking pool such a read would hold the runtime's shutdown. A plain thread reads
//! instead, and it is never waited for. It hands lines over a bounded channel, so it
//! stops reading while no route takes them; a line longer than [`MAX_LINE_BYTES`] is not
//! kept: it is read to its end, counted, and reported as too long. Memory held is thus at
//! most `CHANNEL_LINES` × [`MAX_LINE_BYTES`] whatever arrives on the stream.
//!
//! One process has one standard input: every consumer of it shares one reader, so two
//! routes (or a route restarted by a reload) take turns line by line instead of tearing
//! lines apart.

use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::mpsc;

/// The longest line kept, in bytes (without its line break).
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
/// Lines read ahead of the route.
const CHANNEL_LINES: usize = 16;

/// What the reader found next.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// One line, without its `\n` or `\r\n`.
    Text(Vec<u8>),
    /// A line longer than [`MAX_LINE_BYTES`], dropped; its length.
    TooLong(usize),
    /// The stream ended.
    End,
    /// Reading failed; the stream is treated as ended.
    Failed(String),
}

/// A stream of lines read by its own thread, started on the first request.
pub(super) struct Input {
    /// The stream, until the reader thread takes it.
    source: Mutex<Option<Box<dyn Read + Send>>>,
    state: tokio::sync::Mutex<State>,
    /// The reader's side of the channel, taken by the thread with `source`.
    sender: Mutex<Option<mpsc::Sender<Line>>>,
}

struct State {
    lines: mpsc::Receiver<Line>,
    /// The end was seen: every later request gets `End` at once.
    ended: bool,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").finish_non_exhaustive()
    }
}

impl Input {
    /// Lines of `source`.
    pub(super) fn new(source: Box<dyn Read + Send>) -> Arc<Input> {
        let (tx, rx) = mpsc::channel(CHANNEL_LINES);
        Arc::new(Input {
            source: Mutex::new(Some(source)),
            state: tokio::sync::Mutex::new(State {
                lines: rx,
                ended: false,
            }),
            sender: Mutex::new(Some(tx)),
        })
    }

    /// The process's standard input, shared by every consumer in the process.
    pub(super) fn stdin() -> Arc<Input> {
        static STDIN: OnceLock<Arc<Input>> = OnceLock::new();
        STDIN
            .get_or_init(|| Input::new(Box::new(std::io::stdin())))
            .clone()
    }

    /// The next line; `End` once the stream has ended.
    pub(super) async fn next(&self) -> Line {
        self.start();
        let mut state = self.state.lock().await;
        if state.ended {
            return Line::End;
        }
        let line = state.lines.recv().await.unwrap_or(Line::End);
        if matches!(line, Line::End | Line::Failed(_)) {
            state.ended = true;
        }
        line
    }

    /// Starts the reader thread, once.
    fn start(&self) {
        let source = self.source.lock().ok().and_then(|mut s| s.take());
        let sender = self.sender.lock().ok().and_then(|mut s| s.take());
        let (Some(source), Some(sender)) = (source, sender) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("camel-stream-in".into())
            .spawn(move || read_lines(BufReader::new(source), &sender));
        if let Err(error) = spawned {
            tracing::warn!(%error, "stream:in cannot start its reader thread");
        }
    }
}

/// Reads `source` line by line into `sender` until the end, an error, or no receiver.
fn read_lines(mut source: impl BufRead, sender: &mpsc::Sender<Line>) {
    loop {
        let line = next_line(&mut source);
        let last = matches!(line, Line::End | Line::Failed(_));
        if sender.blocking_send(line).is_err() || last {
            return;
        }
    }
}

/// One line of at most [`MAX_LINE_BYTES`]; a longer one is consumed to its end and
/// reported by length, without being held.
pub(super) fn next_line(source: &mut impl BufRead) -> Line {
    let mut line = Vec::new();
    let mut length = 0usize;
    let mut any = false;
    loop {
        let chunk = match source.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Line::Failed(e.to_string()),
        };
        if chunk.is_empty() {
            // The end: a last line without a line break still counts.
            return match (any, length > MAX_LINE_BYTES) {
                (false, _) => Line::End,
                (true, true) => Line::TooLong(length),
                (true, false) => Line::Text(line),
            };
        }
        any = true;
        let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i)),
            None => (chunk, None),
        };
        length += part.len();
        if length <= MAX_LINE_BYTES {
            line.extend_from_slice(part);
        } else {
            line = Vec::new();
        }
        let used = found.map_or(part.len(), |i| i + 1);
        source.consume(used);
        if found.is_some() {
            if length > MAX_LINE_BYTES {
                return Line::TooLong(length);
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Line::Text(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Line> {
        let mut source = BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            let line = next_line(&mut source);
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn splits_lines_across_buffer_refills() {
        assert_eq!(
            lines(b"hello world\r\nsecond\n\nlast"),
            [
                Line::Text(b"hello world".to_vec()),
                Line::Text(b"second".to_vec()),
                Line::Text(Vec::new()),
                Line::Text(b"last".to_vec()),
                Line::End,
            ]
        );
        assert_eq!(lines(b""), [Line::End]);
    }

    #[test]
    fn a_line_past_the_bound_is_dropped_and_the_next_one_kept() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nok\n");
        let mut source = BufReader::new(&input[..]);
        assert_eq!(next_line(&mut source), Line::TooLong(MAX_LINE_BYTES + 10));
        assert_eq!(next_line(&mut source), Line::Text(b"ok".to_vec()));
        assert_eq!(next_line(&mut source), Line::End);
        // Exactly at the bound is kept.
        let input = vec![b'y'; MAX_LINE_BYTES];
        let mut source = BufReader::new(&input[..]);
        assert!(matches!(next_line(&mut source), Line::Text(t) if t.len() == MAX_LINE_BYTES));
    }

    #[tokio::test]
    async fn consumers_share_one_reader_and_all_see_the_end() {
        let input = Input::new(Box::new(&b"a\nb\n"[..]));
        assert_eq!(input.next().await, Line::Text(b"a".to_vec()));
        assert_eq!(input.next().await, Line::Text(b"b".to_vec()));
        assert_eq!(input.next().await, Line::End);
        assert_eq!(input.next().await, Line::End);
    }
}
