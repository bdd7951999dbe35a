//! `paho-mqtt5:TOPIC` and `paho:TOPIC`: MQTT 5 and 3.1.1 through rumqttc, at least once.
//!
//! - In `from`, a consumer subscribed to `TOPIC` (a filter: `+` and `#` wildcards,
//!   `$share/GROUP/FILTER` to share the messages among several consumers). Each QoS 1/2
//!   message is acknowledged only after the route succeeded. On a persistent session
//!   (`clean_start=false` with a fixed `client_id`) a message whose route failed stays
//!   unacknowledged and the consumer reconnects, so the broker sends it again; a process
//!   that dies loses nothing either, the broker keeping what was not acknowledged. At most
//!   `receive_maximum` (`max_inflight` on 3.1.1) messages are in flight. MQTT 5 user
//!   properties come in as headers, never `Camel*` ones.
//! - In `to`, a producer: the exchange completes when the broker acknowledged the
//!   message (QoS 1/2), with `qos`, `retained`, the `CamelPahoOverrideTopic` header, and
//!   (MQTT 5) the exchange's headers as user properties.
//!
//! Option names follow Camel's `paho-mqtt5` and `paho` components in snake_case
//! (camelCase is accepted). The guide is `docs/components.md` at the repository root;
//! ADR 0138 says why rumqttc and how redelivery works.
//!
//! ```
//! use camel_api::Component;
//! assert_eq!(camel_mqtt::MqttComponent::mqtt5().scheme(), "paho-mqtt5");
//! assert_eq!(camel_mqtt::MqttComponent::mqtt311().scheme(), "paho");
//! ```

mod component;
mod consumer;
mod link;
mod message;
mod options;
mod producer;

pub use component::MqttComponent;
pub use consumer::MqttConsumer;
pub use message::{
    DUPLICATE_HEADER, OVERRIDE_TOPIC_HEADER, QOS_HEADER, RETAINED_HEADER, TOPIC_HEADER,
};
pub use options::{MqttOptions, Password, Protocol, DEFAULT_BROKER_URL, DEFAULT_SESSION_EXPIRY};
pub use producer::MqttProducer;
