//! `from: sqs:QUEUE` (or `aws2-sqs:QUEUE`): long polling, at least once.
//!
//! Each of `concurrent_consumers` poll loops receives up to `max_messages_per_poll`
//! messages (long polling, `wait_time_seconds`), runs them through the route, and
//! deletes the ones whose exchange succeeded in one `DeleteMessageBatch`. A failed
//! exchange's message is left alone: it becomes visible again when its
//! `visibility_timeout` ends and SQS redelivers it (to this or another process). While an
//! exchange runs, its message's visibility is extended every half `visibility_timeout`.
//! On a FIFO queue the messages of one `MessageGroupId` in a batch run one after another,
//! and after a failure the rest of that group's batch is made visible again (SQS hands it
//! out only after the failed message), so the group's order holds; SQS itself never hands out a group's next message while one is
//! in flight.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, Message,
    MessageSystemAttributeName,
};
use camel_api::inbound::admits_transport_header;
use camel_api::{CamelError, Consumer, ConsumerContext, Exchange, Parameters};
use futures::future::join_all;

use super::client::queue_url;
use super::codec::{MESSAGE_ID_HEADER, SEQUENCE_NUMBER_HEADER};
use crate::aws::describe;

/// Header: the receipt handle of the message (Camel's name).
pub const RECEIPT_HANDLE_HEADER: &str = "CamelAwsSqsReceiptHandle";
/// Header: how many times SQS has handed out the message (1 the first time).
pub const RECEIVE_COUNT_HEADER: &str = "CamelAwsSqsApproximateReceiveCount";
/// Header: the message's `MessageGroupId` (FIFO queues).
pub const GROUP_ID_HEADER: &str = "CamelAwsSqsMessageGroupId";

/// Prefixes of message attribute names that never become exchange headers, besides the
/// framework's `Camel*` control headers (which include this consumer's own
/// `CamelAwsSqs*`): `AWS.` and `Amazon.`, the namespace SQS keeps for itself.
pub const RESERVED_ATTRIBUTE_PREFIXES: &[&str] = &["AWS.", "Amazon."];

/// Consumer parameters of `sqs:` (Camel's `aws2-sqs` names in snake_case).
pub const SQS_CONSUMER_PARAMETERS: &[&str] = &[
    "max_messages_per_poll",
    "concurrent_consumers",
    "wait_time_seconds",
    "visibility_timeout",
    "delete_after_read",
    "auto_create_queue",
    "delay",
    "initial_delay",
    "greedy",
];

/// How the consumer polls.
#[derive(Debug, Clone)]
pub struct SqsConsumerOptions {
    /// Queue name or URL.
    pub queue: String,
    /// Messages per `ReceiveMessage` (1 to 10).
    pub max_messages_per_poll: i32,
    /// Poll loops running at once.
    pub concurrent_consumers: usize,
    /// Long-poll wait (0 to 20 seconds).
    pub wait_time_seconds: i32,
    /// How long a received message stays invisible, in seconds; extended while it runs.
    pub visibility_timeout: i32,
}

impl SqsConsumerOptions {
    /// Reads the consumer parameters (Camel's units: seconds for the two timeouts).
    pub fn take_parameters(queue: &str, params: &mut Parameters) -> Result<Self, CamelError> {
        let invalid = |why: &str| CamelError::invalid_uri(format!("sqs:{queue}"), why);
        let max_messages_per_poll = params.take::<i32>("max_messages_per_poll")?.unwrap_or(10);
        if !(1..=10).contains(&max_messages_per_poll) {
            return Err(invalid(
                "max_messages_per_poll must be 1 to 10 (an SQS limit)",
            ));
        }
        let concurrent_consumers = params.take::<usize>("concurrent_consumers")?.unwrap_or(1);
        if concurrent_consumers == 0 {
            return Err(invalid("concurrent_consumers must be at least 1"));
        }
        let wait_time_seconds = params.take::<i32>("wait_time_seconds")?.unwrap_or(20);
        if !(0..=20).contains(&wait_time_seconds) {
            return Err(invalid("wait_time_seconds must be 0 to 20 (an SQS limit)"));
        }
        // Camel's consumer deletes after the exchange by default, as this one does; keeping
        // messages in the queue after a success is not done here.
        if params.take_bool("delete_after_read")? == Some(false) {
            return Err(invalid(
                "deleteAfterRead=false is not supported yet: this consumer deletes each \
                 message once its route succeeded (Camel's default)",
            ));
        }
        if params.take_bool("auto_create_queue")? == Some(true) {
            return Err(invalid(
                "autoCreateQueue=true is not supported yet by the consumer: create the queue \
                 first (the `sqs:` sink's queue must exist too)",
            ));
        }
        // Camel polls on a schedule; this consumer long-polls (`wait_time_seconds`), so the
        // scheduler's options have nothing to tune.
        let scheduled: Vec<&str> = ["delay", "initial_delay", "greedy"]
            .into_iter()
            .filter(|k| params.take_str(k).is_some())
            .collect();
        if !scheduled.is_empty() {
            tracing::warn!(queue, options = ?scheduled,
                "Camel's polling options are accepted without effect: this consumer long-polls (waitTimeSeconds)");
        }
        let visibility_timeout = params.take::<i32>("visibility_timeout")?.unwrap_or(30);
        if !(1..=43_200).contains(&visibility_timeout) {
            return Err(invalid(
                "visibility_timeout is in seconds, 1 to 43200 (an SQS limit)",
            ));
        }
        Ok(SqsConsumerOptions {
            queue: queue.to_string(),
            max_messages_per_poll,
            concurrent_consumers,
            wait_time_seconds,
            visibility_timeout,
        })
    }
}

/// The SQS consumer.
#[derive(Debug)]
pub struct SqsConsumer {
    client: aws_sdk_sqs::Client,
    options: Arc<SqsConsumerOptions>,
}

impl SqsConsumer {
    /// A consumer using `client`.
    pub fn new(client: aws_sdk_sqs::Client, options: SqsConsumerOptions) -> Self {
        SqsConsumer {
            client,
            options: Arc::new(options),
        }
    }
}

#[async_trait]
impl Consumer for SqsConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = self.options.clone();
        let mut backoff = Duration::from_millis(200);
        let url = loop {
            match queue_url(&self.client, &o.queue).await {
                Ok(url) => break url,
                Err(e) => {
                    tracing::warn!(queue = %o.queue, error = %e, retry_in = ?backoff,
                        "SQS consumer cannot find its queue; retrying");
                    ctx.health().set_failing(&e);
                }
            }
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(Duration::from_secs(30));
        };
        let fifo = url.ends_with(".fifo");
        let poller = Arc::new(Poller {
            client: self.client.clone(),
            url,
            fifo,
            options: o.clone(),
        });
        let loops = (0..o.concurrent_consumers).map(|_| {
            let (poller, ctx) = (poller.clone(), ctx.clone());
            tokio::spawn(async move { poller.poll_loop(&ctx).await })
        });
        for r in join_all(loops).await {
            if let Err(e) = r {
                tracing::error!(queue = %o.queue, error = %e, "an SQS poll loop panicked");
            }
        }
        Ok(())
    }
}

struct Poller {
    client: aws_sdk_sqs::Client,
    url: String,
    fifo: bool,
    options: Arc<SqsConsumerOptions>,
}

impl Poller {
    async fn poll_loop(&self, ctx: &ConsumerContext) {
        let o = &self.options;
        let mut backoff = Duration::from_millis(200);
        while !ctx.is_cancelled() {
            let receive = self
                .client
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages(o.max_messages_per_poll)
                .wait_time_seconds(o.wait_time_seconds)
                .visibility_timeout(o.visibility_timeout)
                .message_system_attribute_names(MessageSystemAttributeName::All)
                .message_attribute_names("All")
                .send();
            let received = tokio::select! {
                _ = ctx.cancelled() => return,
                r = receive => r,
            };
            let messages = match received {
                Ok(out) => {
                    ctx.health().set_healthy();
                    backoff = Duration::from_millis(200);
                    out.messages.unwrap_or_default()
                }
                Err(e) => {
                    let e = describe(&format!("receiving from SQS queue `{}`", o.queue), e);
                    tracing::warn!(error = %e, retry_in = ?backoff, "SQS receive failed; retrying");
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                    continue;
                }
            };
            if messages.is_empty() {
                continue;
            }
            let done = self.run_batch(ctx, messages).await;
            self.delete(done).await;
        }
    }

    /// Runs a batch; returns the receipt handles of the messages whose exchange succeeded.
    async fn run_batch(&self, ctx: &ConsumerContext, messages: Vec<Message>) -> Vec<String> {
        if !self.fifo {
            let runs = messages.into_iter().map(|m| self.run_one(ctx, m));
            return join_all(runs).await.into_iter().flatten().collect();
        }
        // FIFO: one group's messages one after another (in the order SQS gave them), the
        // groups side by side; a failure leaves the group's rest for redelivery.
        let mut groups: Vec<(String, Vec<Message>)> = Vec::new();
        for m in messages {
            let group = attribute(&m, MessageSystemAttributeName::MessageGroupId)
                .unwrap_or_default()
                .to_string();
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, list)) => list.push(m),
                None => groups.push((group, vec![m])),
            }
        }
        let runs = groups.into_iter().map(|(_, list)| async move {
            let mut done = Vec::new();
            let mut rest = list.into_iter();
            for m in rest.by_ref() {
                match self.run_one(ctx, m).await {
                    Some(handle) => done.push(handle),
                    None => break,
                }
            }
            // Not run because an earlier message of the group failed: back to the queue
            // now; SQS hands them out only after the failed one (the group is blocked
            // while it is in flight).
            self.release(rest.filter_map(|m| m.receipt_handle).collect())
                .await;
            done
        });
        join_all(runs).await.into_iter().flatten().collect()
    }

    /// Runs one message, extending its visibility while it runs; its receipt handle
    /// when the exchange succeeded.
    async fn run_one(&self, ctx: &ConsumerContext, message: Message) -> Option<String> {
        let handle = message.receipt_handle.clone()?;
        let exchange = to_exchange(&message);
        let send = ctx.send(exchange);
        tokio::pin!(send);
        let every = Duration::from_millis(
            u64::try_from(self.options.visibility_timeout).unwrap_or(30) * 500,
        );
        let mut extend = tokio::time::interval(every);
        extend.tick().await;
        let result = loop {
            tokio::select! {
                r = &mut send => break r,
                _ = extend.tick() => {
                    let extended = self
                        .client
                        .change_message_visibility()
                        .queue_url(&self.url)
                        .receipt_handle(&handle)
                        .visibility_timeout(self.options.visibility_timeout)
                        .send()
                        .await;
                    if let Err(e) = extended {
                        tracing::warn!(queue = %self.options.queue, error = %describe("extending visibility", e),
                            "the message may be redelivered while its exchange still runs");
                    }
                }
            }
        };
        match result {
            Ok(_) => Some(handle),
            Err(error) => {
                tracing::debug!(queue = %self.options.queue, %error,
                    "route failed; SQS redelivers the message after its visibility timeout");
                None
            }
        }
    }

    /// Makes messages visible again at once, ten per request.
    async fn release(&self, handles: Vec<String>) {
        for chunk in handles.chunks(10) {
            let entries: Vec<_> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, h)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(h)
                        .visibility_timeout(0)
                        .build()
                        .ok()
                })
                .collect();
            let released = self
                .client
                .change_message_visibility_batch()
                .queue_url(&self.url)
                .set_entries(Some(entries))
                .send()
                .await;
            if let Err(e) = released {
                tracing::debug!(queue = %self.options.queue, error = %describe("releasing messages", e),
                    "the messages come back after their visibility timeout");
            }
        }
    }

    /// Deletes the messages whose exchange succeeded, ten per request.
    async fn delete(&self, handles: Vec<String>) {
        for chunk in handles.chunks(10) {
            let entries: Vec<_> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, h)| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(h)
                        .build()
                        .ok()
                })
                .collect();
            let deleted = self
                .client
                .delete_message_batch()
                .queue_url(&self.url)
                .set_entries(Some(entries))
                .send()
                .await;
            match deleted {
                Ok(out) if !out.failed.is_empty() => {
                    tracing::warn!(queue = %self.options.queue, failed = out.failed.len(),
                        "SQS did not delete some messages; they will be delivered again");
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(queue = %self.options.queue, error = %describe("deleting messages", e),
                        "SQS did not delete the messages; they will be delivered again");
                }
            }
        }
    }
}

fn attribute(message: &Message, name: MessageSystemAttributeName) -> Option<&str> {
    message
        .attributes
        .as_ref()
        .and_then(|a| a.get(&name))
        .map(String::as_str)
}

/// The exchange of one message: its body, the `CamelAwsSqs*` headers, and each `String`
/// or `Number` message attribute that [`admits_transport_header`] admits (a `Camel*`
/// attribute is dropped, so a publisher cannot set a producer's control header such as
/// `CamelSqlQuery`, nor this consumer's own headers such as the receipt handle).
pub(crate) fn to_exchange(message: &Message) -> Exchange {
    let mut exchange = Exchange::new(message.body.clone().unwrap_or_default());
    let headers = &mut exchange.message.headers;
    if let Some(id) = &message.message_id {
        headers.insert(MESSAGE_ID_HEADER, id.as_str());
    }
    if let Some(handle) = &message.receipt_handle {
        headers.insert(RECEIPT_HANDLE_HEADER, handle.as_str());
    }
    let count = attribute(message, MessageSystemAttributeName::ApproximateReceiveCount)
        .and_then(|c| c.parse::<i64>().ok())
        .unwrap_or(1);
    headers.insert(RECEIVE_COUNT_HEADER, count);
    if count > 1 {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    let headers = &mut exchange.message.headers;
    if let Some(group) = attribute(message, MessageSystemAttributeName::MessageGroupId) {
        headers.insert(GROUP_ID_HEADER, group);
    }
    if let Some(seq) = attribute(message, MessageSystemAttributeName::SequenceNumber) {
        headers.insert(SEQUENCE_NUMBER_HEADER, seq);
    }
    let attributes: HashMap<_, _> = message.message_attributes.clone().unwrap_or_default();
    for (name, value) in attributes {
        if !admits_transport_header(&name, RESERVED_ATTRIBUTE_PREFIXES) {
            continue;
        }
        if let Some(text) = value.string_value {
            headers.insert(name, text);
        }
    }
    exchange
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_sqs::types::MessageAttributeValue;

    fn attribute(value: &str) -> MessageAttributeValue {
        MessageAttributeValue::builder()
            .data_type("String")
            .string_value(value)
            .build()
            .unwrap()
    }

    fn options(uri: &str) -> Result<SqsConsumerOptions, CamelError> {
        let mut parsed = camel_api::EndpointUri::parse(uri)?;
        SqsConsumerOptions::take_parameters("q", &mut parsed.parameters)
    }

    #[test]
    fn camels_polling_options_as_a_kamelet_passes_them() {
        // The catalog's aws-s3-event-based-source Kamelet's defaults.
        assert!(
            options("sqs:q?autoCreateQueue=false&deleteAfterRead=true&delay=500&greedy=false")
                .is_ok()
        );
        let e = options("sqs:q?deleteAfterRead=false")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("deleteAfterRead=false is not supported yet"),
            "{e}"
        );
        let e = options("sqs:q?autoCreateQueue=true")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("autoCreateQueue=true is not supported yet"),
            "{e}"
        );
    }

    #[test]
    fn message_attributes_never_set_control_or_consumer_headers() {
        let message = Message::builder()
            .message_id("m-1")
            .receipt_handle("real-handle")
            .body("b")
            .message_attributes("CamelSqlQuery", attribute("DROP TABLE orders"))
            .message_attributes("camelhttpuri", attribute("http://127.0.0.1:1/admin"))
            .message_attributes(RECEIPT_HANDLE_HEADER, attribute("forged"))
            .message_attributes("AWS.TraceHeader", attribute("x"))
            .message_attributes("order-id", attribute("42"))
            .build();
        let ex = to_exchange(&message);
        assert!(ex.header("CamelSqlQuery").is_none());
        assert!(ex.header("camelhttpuri").is_none());
        assert!(ex.header("AWS.TraceHeader").is_none());
        assert_eq!(
            ex.header(RECEIPT_HANDLE_HEADER)
                .map(|v| v.to_string())
                .as_deref(),
            Some("real-handle")
        );
        assert_eq!(
            ex.header("order-id").map(|v| v.to_string()).as_deref(),
            Some("42")
        );
    }
}
