//! The object being gathered: the bodies appended so far, who waits for them, and
//! whether it is complete. A pure type, so the rules are tested without S3 or a clock.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::time::Instant;

/// When an object is complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Complete at this many messages.
    pub(crate) messages: usize,
    /// Complete at this many bytes or more.
    pub(crate) bytes: usize,
    /// Complete this long after the first message.
    pub(crate) timeout: Option<Duration>,
}

/// One open object. Invariant: it holds at least one message, and fewer than
/// `limits.messages` and `limits.bytes` until [`is_complete`](Self::is_complete) says
/// otherwise, so its data never exceeds `limits.bytes` plus the last body appended.
#[derive(Debug)]
pub(crate) struct OpenObject<W> {
    data: BytesMut,
    waiters: Vec<W>,
    deadline: Option<Instant>,
}

impl<W> OpenObject<W> {
    /// An object whose first message is `body`, arrived at `now`.
    pub(crate) fn first(body: &[u8], waiter: W, limits: &Limits, now: Instant) -> Self {
        let mut data = BytesMut::with_capacity(body.len().min(limits.bytes));
        data.extend_from_slice(body);
        OpenObject {
            data,
            waiters: vec![waiter],
            deadline: limits.timeout.map(|t| now + t),
        }
    }

    /// Appends the next message.
    pub(crate) fn append(&mut self, body: &[u8], waiter: W) {
        self.data.extend_from_slice(body);
        self.waiters.push(waiter);
    }

    /// Enough messages or bytes to complete it now.
    pub(crate) fn is_complete(&self, limits: &Limits) -> bool {
        self.waiters.len() >= limits.messages || self.data.len() >= limits.bytes
    }

    /// When the timeout completes it, if one is set.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The object's content and the waiters of its messages, in arrival order.
    pub(crate) fn close(self) -> (Bytes, Vec<W>) {
        (self.data.freeze(), self.waiters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        messages: 3,
        bytes: 10,
        timeout: Some(Duration::from_millis(200)),
    };

    #[test]
    fn complete_at_the_message_count() {
        let now = Instant::now();
        let mut o = OpenObject::first(b"a", 1, &LIMITS, now);
        o.append(b"b", 2);
        assert!(!o.is_complete(&LIMITS));
        o.append(b"c", 3);
        assert!(o.is_complete(&LIMITS));
        let (data, waiters) = o.close();
        assert_eq!(&data[..], b"abc");
        assert_eq!(waiters, [1, 2, 3]);
    }

    #[test]
    fn complete_at_the_size_with_the_body_that_crossed_it() {
        let now = Instant::now();
        let mut o = OpenObject::first(b"12345678", 1, &LIMITS, now);
        assert!(!o.is_complete(&LIMITS));
        o.append(b"90abcdef", 2);
        assert!(o.is_complete(&LIMITS));
        assert_eq!(o.close().0.len(), 16);
        assert!(OpenObject::first(&[0u8; 40], 1, &LIMITS, now).is_complete(&LIMITS));
    }

    #[test]
    fn the_deadline_counts_from_the_first_message() {
        let now = Instant::now();
        let o = OpenObject::first(b"x", 1, &LIMITS, now);
        assert_eq!(o.deadline(), Some(now + Duration::from_millis(200)));
        let none = Limits {
            timeout: None,
            ..LIMITS
        };
        assert_eq!(OpenObject::first(b"x", 1, &none, now).deadline(), None);
    }
}
