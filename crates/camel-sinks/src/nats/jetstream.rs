//! `from: nats:SUBJECT?durable_name=…`: a durable JetStream pull consumer, at least once.
//!
//! Every message is acknowledged after the route finished it successfully (an exchange
//! an error handler handled counts as a success). A failed exchange is negatively
//! acknowledged with `nak_delay`, so JetStream redelivers it later, possibly to another
//! process on the same durable; once it has been delivered `max_deliver` times it is
//! published to `dead_letter_subject` (when set) and terminated. While an exchange runs
//! longer than half of `ack_wait`, an in-progress acknowledgement keeps the server from
//! redelivering it. The server never has more than `max_ack_pending` messages of the
//! durable unacknowledged, so a slow route holds at most that many — that is the
//! backpressure, shared by every process on the durable.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy, PullConsumer};
use async_nats::jetstream::{self, AckKind};
use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, Parameters};
use futures::stream::FuturesUnordered;
use futures::StreamExt;

use super::codec::{SEQUENCE_HEADER, STREAM_HEADER};
use super::consumer::{connect, to_exchange};

/// Header with how many times JetStream has delivered the message (1 the first time).
pub const DELIVERED_HEADER: &str = "CamelNatsJetStreamDelivered";

/// Consumer parameters of `nats:` (JetStream); `jetstream_name` and `durable_name`
/// accept Camel's `jetstreamName` and `durableName` spelling.
pub const JETSTREAM_CONSUMER_PARAMETERS: &[&str] = &[
    "durable_name",
    "jetstream_name",
    "deliver_policy",
    "max_ack_pending",
    "ack_wait",
    "max_deliver",
    "nak_delay",
    "dead_letter_subject",
];

/// How a durable JetStream consumer is set up.
#[derive(Debug, Clone)]
pub struct JetStreamOptions {
    /// The subject filter (wildcards allowed).
    pub subject: String,
    /// Comma-separated server URLs.
    pub servers: String,
    /// The stream; found by subject when absent.
    pub stream: Option<String>,
    /// The durable name every process of the application shares.
    pub durable_name: String,
    /// Where a new durable starts.
    pub deliver_policy: DeliverPolicy,
    /// Most unacknowledged messages of the durable at once (all processes together).
    pub max_ack_pending: usize,
    /// How long the server waits for an acknowledgement before redelivering.
    pub ack_wait: Duration,
    /// Deliveries before a failing message is dead-lettered (`None`: redeliver forever).
    pub max_deliver: Option<u32>,
    /// Delay JetStream waits before redelivering a failed message.
    pub nak_delay: Duration,
    /// Where a message that failed `max_deliver` times is published before it is
    /// terminated.
    pub dead_letter_subject: Option<String>,
    /// How long the first connection attempt may take.
    pub connect_timeout: Duration,
}

impl JetStreamOptions {
    /// Reads the JetStream consumer parameters; `None` when the URI asks for no durable
    /// consumer (no `durable_name`), so the core subscriber is used.
    pub fn take_parameters(
        subject: &str,
        servers: &str,
        stream: Option<String>,
        params: &mut Parameters,
    ) -> Result<Option<Self>, CamelError> {
        let stream = params.take_str("jetstream_name").or(stream);
        let deliver_policy = match params.take_choice(
            "deliver_policy",
            &["all", "last", "new", "last_per_subject"],
        )? {
            Some("last") => DeliverPolicy::Last,
            Some("new") => DeliverPolicy::New,
            Some("last_per_subject") => DeliverPolicy::LastPerSubject,
            _ => DeliverPolicy::All,
        };
        let max_ack_pending = params.take::<usize>("max_ack_pending")?.unwrap_or(1000);
        let ack_wait = params
            .take_duration("ack_wait")?
            .unwrap_or(Duration::from_secs(30));
        let max_deliver = params.take::<u32>("max_deliver")?;
        let nak_delay = params
            .take_duration("nak_delay")?
            .unwrap_or(Duration::from_secs(1));
        let dead_letter_subject = params.take_str("dead_letter_subject");
        let connect_timeout = params
            .take_duration("connect_timeout")?
            .unwrap_or(Duration::from_secs(5));
        let Some(durable_name) = params.take_str("durable_name") else {
            return Ok(None);
        };
        let invalid = |why: String| CamelError::invalid_uri(format!("nats:{subject}"), why);
        if durable_name.is_empty() || durable_name.contains(['.', '*', '>', ' ']) {
            return Err(invalid(format!(
                "durable_name `{durable_name}` must be a non-empty name without `.`, `*`, `>` or spaces"
            )));
        }
        if max_ack_pending == 0 {
            return Err(invalid("max_ack_pending must be at least 1".into()));
        }
        if ack_wait < Duration::from_millis(100) {
            return Err(invalid("ack_wait must be at least 100ms".into()));
        }
        if max_deliver == Some(0) {
            return Err(invalid(
                "max_deliver must be at least 1 (leave it out to redeliver forever)".into(),
            ));
        }
        Ok(Some(JetStreamOptions {
            subject: subject.to_string(),
            servers: servers.to_string(),
            stream,
            durable_name,
            deliver_policy,
            max_ack_pending,
            ack_wait,
            max_deliver,
            nak_delay,
            dead_letter_subject,
            connect_timeout,
        }))
    }
}

/// The durable pull consumer.
#[derive(Debug)]
pub struct JetStreamConsumer {
    options: Arc<JetStreamOptions>,
}

impl JetStreamConsumer {
    /// A consumer with these options.
    pub fn new(options: JetStreamOptions) -> Self {
        JetStreamConsumer {
            options: Arc::new(options),
        }
    }

    async fn durable(&self, js: &jetstream::Context) -> Result<PullConsumer, CamelError> {
        let o = &self.options;
        let stream_name = match &o.stream {
            Some(name) => name.clone(),
            None => js.stream_by_subject(o.subject.clone()).await.map_err(|e| {
                CamelError::external(
                    format!(
                        "finding the JetStream stream for `{}` (set jetstream_name)",
                        o.subject
                    ),
                    e,
                )
            })?,
        };
        let stream = js.get_stream(&stream_name).await.map_err(|e| {
            CamelError::external(format!("opening JetStream stream `{stream_name}`"), e)
        })?;
        let config = pull::Config {
            durable_name: Some(o.durable_name.clone()),
            filter_subject: o.subject.clone(),
            deliver_policy: o.deliver_policy,
            ack_policy: AckPolicy::Explicit,
            ack_wait: o.ack_wait,
            max_deliver: o.max_deliver.map_or(-1, i64::from),
            max_ack_pending: i64::try_from(o.max_ack_pending).unwrap_or(i64::MAX),
            ..Default::default()
        };
        stream.create_consumer(config).await.map_err(|e| {
            CamelError::external(
                format!(
                    "creating durable consumer `{}` on stream `{stream_name}`",
                    o.durable_name
                ),
                e,
            )
        })
    }
}

#[async_trait]
impl Consumer for JetStreamConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = self.options.clone();
        let client = connect(&o.servers, o.connect_timeout, &o.subject).await?;
        let js = jetstream::new(client.clone());
        let consumer = self.durable(&js).await?;
        tracing::info!(subject = %o.subject, durable = %o.durable_name,
            max_ack_pending = o.max_ack_pending, "consuming from the JetStream durable");
        let mut messages = consumer
            .stream()
            .max_messages_per_batch(o.max_ack_pending.min(256))
            .messages()
            .await
            .map_err(|e| {
                CamelError::external(format!("pulling from durable `{}`", o.durable_name), e)
            })?;
        // The server caps unacknowledged messages at `max_ack_pending`; as many exchanges
        // run here at most, so a pulled message never waits for a slot (its ack_wait would
        // run while it waited). They run on this task, side by side: a task per message
        // cost more than the route itself for synchronous routes (bench
        // `jetstream_consumer`).
        let mut running = FuturesUnordered::new();
        let cancelled = ctx.cancelled();
        tokio::pin!(cancelled);
        loop {
            tokio::select! {
                biased;
                _ = &mut cancelled => break,
                Some(()) = running.next(), if !running.is_empty() => {}
                message = messages.next(), if running.len() < o.max_ack_pending => match message {
                    None => break,
                    Some(Ok(message)) => {
                        ctx.health().set_healthy();
                        running.push(handle(&ctx, &js, &o, message));
                    }
                    Some(Err(e)) => {
                        // Missed heartbeats and the like: the stream reconnects on its own.
                        tracing::warn!(subject = %o.subject, durable = %o.durable_name, error = %e,
                            "JetStream pull failed; retrying");
                        ctx.health()
                            .set_failing(format!("pulling from `{}`: {e}", o.durable_name));
                    }
                },
            }
        }
        // Exchanges already running finish and are acknowledged; messages pulled but not
        // started go back to the server once `ack_wait` passes.
        while running.next().await.is_some() {}
        let _ = client.flush().await;
        Ok(())
    }
}

/// Runs one message through the route and settles it with the server.
async fn handle(
    ctx: &ConsumerContext,
    js: &jetstream::Context,
    o: &JetStreamOptions,
    message: jetstream::Message,
) {
    let (delivered, sequence, stream) = match message.info() {
        Ok(info) => (
            info.delivered,
            info.stream_sequence,
            info.stream.to_string(),
        ),
        Err(_) => (1, 0, String::new()),
    };
    let mut exchange = to_exchange(&message.message)
        .with_header(DELIVERED_HEADER, delivered)
        .with_header(SEQUENCE_HEADER, sequence)
        .with_header(STREAM_HEADER, stream);
    if delivered > 1 {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    let send = ctx.send(exchange);
    tokio::pin!(send);
    // A route that finishes on its first poll (synchronous steps) needs no in-progress
    // timer: arming one per message costs a timer-wheel entry each time.
    let result = match futures::poll!(&mut send) {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => {
            let mut progress = tokio::time::interval(o.ack_wait / 2);
            progress.tick().await;
            loop {
                tokio::select! {
                    r = &mut send => break r,
                    _ = progress.tick() => {
                        let _ = message.ack_with(AckKind::Progress).await;
                    }
                }
            }
        }
    };
    let settle = match result {
        Ok(_) => message.ack().await,
        Err(CamelError::Stopping(_)) => message.ack_with(AckKind::Nak(None)).await,
        Err(error) => {
            let exhausted = o.max_deliver.is_some_and(|max| delivered >= i64::from(max));
            if exhausted {
                dead_letter(js, o, &message, &error).await
            } else {
                tracing::debug!(subject = %message.subject, durable = %o.durable_name,
                    delivered, %error, "route failed; JetStream redelivers the message");
                message.ack_with(AckKind::Nak(Some(o.nak_delay))).await
            }
        }
    };
    if let Err(e) = settle {
        tracing::warn!(subject = %message.subject, durable = %o.durable_name, error = %e,
            "acknowledging a JetStream message failed; the server redelivers it");
    }
}

/// Publishes a message that failed `max_deliver` times to the dead-letter subject, then
/// terminates it. If the publish fails the message is nak'ed instead, so nothing is lost.
async fn dead_letter(
    js: &jetstream::Context,
    o: &JetStreamOptions,
    message: &jetstream::Message,
    error: &CamelError,
) -> Result<(), async_nats::Error> {
    if let Some(target) = &o.dead_letter_subject {
        let mut headers = message.headers.clone().unwrap_or_default();
        headers.insert("CamelNatsDeadLetterReason", error.to_string().as_str());
        headers.insert("CamelNatsOriginalSubject", message.subject.as_str());
        let published = match js
            .publish_with_headers(target.clone(), headers, message.payload.clone())
            .await
        {
            Ok(ack) => ack.await.map(|_| ()).map_err(async_nats::Error::from),
            Err(e) => Err(async_nats::Error::from(e)),
        };
        if let Err(e) = published {
            tracing::warn!(subject = %message.subject, dead_letter = %target, error = %e,
                "publishing to the dead-letter subject failed; the message is redelivered");
            return message.ack_with(AckKind::Nak(Some(o.nak_delay))).await;
        }
    }
    tracing::warn!(subject = %message.subject, durable = %o.durable_name, %error,
        dead_letter = o.dead_letter_subject.as_deref().unwrap_or("(none)"),
        "message failed max_deliver times; terminated");
    message.ack_with(AckKind::Term).await
}
