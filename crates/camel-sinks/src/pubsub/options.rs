//! The options of a subscription consumer, in Camel's `google-pubsub` names.

use std::time::Duration;

use camel_api::{CamelError, Parameters};

/// Consumer parameters of `google-pubsub:`/`pubsub:` (Camel's names in snake_case).
pub const PUBSUB_CONSUMER_PARAMETERS: &[&str] = &[
    "max_messages_per_poll",
    "concurrent_consumers",
    "ack_mode",
    "synchronous_pull",
    "max_ack_extension_period",
    "ack_deadline",
];

/// Who acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckMode {
    /// The consumer: after the route succeeded; a failed exchange's message is handed
    /// back for redelivery (Camel's `AUTO`, the default).
    Auto,
    /// Nobody here: the deadline lapses and Pub/Sub redelivers unless something else
    /// acknowledges the `CamelGooglePubsubMsgAckId` (Camel's `NONE`).
    None,
}

/// How the consumer pulls.
#[derive(Debug, Clone)]
pub struct PubSubConsumerOptions {
    /// `projects/P/subscriptions/S`.
    pub subscription: String,
    /// Messages per pull (Camel's default, 1; Pub/Sub takes up to 1000).
    pub max_messages_per_poll: u32,
    /// Pull loops running at once.
    pub concurrent_consumers: usize,
    /// Who acknowledges.
    pub ack_mode: AckMode,
    /// How long a running exchange's deadline keeps being pushed forward (Camel's
    /// default, 3600 s).
    pub max_ack_extension_period: Duration,
    /// Seconds each push moves the deadline to (ours; default 60); also a stream's
    /// deadline for the messages it sends.
    pub ack_deadline: u32,
    /// REST pull instead of gRPC streaming pull (Camel's `synchronousPull`). Unset:
    /// streaming against Google, REST pull against the emulator, which loses the
    /// messages of a stream that is reset (ADR 0171).
    pub synchronous_pull: Option<bool>,
}

impl PubSubConsumerOptions {
    /// Reads the consumer parameters of `raw` (the URI, for errors).
    pub fn take_parameters(
        raw: &str,
        subscription: &str,
        params: &mut Parameters,
    ) -> Result<Self, CamelError> {
        let invalid = |why: &str| CamelError::invalid_uri(raw.to_string(), why);
        let max_messages_per_poll = params.take::<u32>("max_messages_per_poll")?.unwrap_or(1);
        if !(1..=1000).contains(&max_messages_per_poll) {
            return Err(invalid("max_messages_per_poll must be 1 to 1000"));
        }
        let concurrent_consumers = params.take::<usize>("concurrent_consumers")?.unwrap_or(1);
        if concurrent_consumers == 0 {
            return Err(invalid("concurrent_consumers must be at least 1"));
        }
        let ack_mode = match params
            .take_str("ack_mode")
            .map(|m| m.to_ascii_uppercase())
            .as_deref()
        {
            None | Some("AUTO") => AckMode::Auto,
            Some("NONE") => AckMode::None,
            Some(_) => return Err(invalid("ack_mode is AUTO or NONE")),
        };
        // Camel: false streams (Google's asynchronous subscriber), true pulls.
        let synchronous_pull = params.take_bool("synchronous_pull")?;
        let max_ack_extension_period = Duration::from_secs(
            params
                .take::<u64>("max_ack_extension_period")?
                .unwrap_or(3600),
        );
        let ack_deadline = params.take::<u32>("ack_deadline")?.unwrap_or(60);
        if !(10..=600).contains(&ack_deadline) {
            return Err(invalid(
                "ack_deadline is in seconds, 10 to 600 (a Pub/Sub limit)",
            ));
        }
        Ok(PubSubConsumerOptions {
            subscription: subscription.to_string(),
            max_messages_per_poll,
            concurrent_consumers,
            ack_mode,
            max_ack_extension_period,
            ack_deadline,
            synchronous_pull,
        })
    }
}
