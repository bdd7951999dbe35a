//! The endpoint options, read from the URI with Camel's names (`paho` and `paho-mqtt5`
//! components) in snake_case; camelCase is accepted.

use std::fmt;
use std::time::Duration;

use camel_api::{percent_decode, CamelError, EndpointUri};

/// Parameters both schemes take.
const COMMON_PARAMETERS: &[&str] = &[
    "broker_url",
    "client_id",
    "qos",
    "retained",
    "user_name",
    "password",
    "keep_alive_interval",
    "connection_timeout",
    "automatic_reconnect",
    "max_reconnect_delay",
    "maximum_packet_size",
];

/// Parameters `paho-mqtt5:` takes besides the common ones.
const V5_PARAMETERS: &[&str] = &["clean_start", "session_expiry_interval", "receive_maximum"];

/// Parameters `paho:` (MQTT 3.1.1) takes besides the common ones.
const V311_PARAMETERS: &[&str] = &["clean_session", "max_inflight", "mqtt_version"];

/// Camel's default broker.
pub const DEFAULT_BROKER_URL: &str = "tcp://localhost:1883";

/// The session expiry a persistent MQTT 5 session gets when `session_expiry_interval` is
/// not given (a day, in seconds): with none, the broker would end the session at the
/// first disconnect and `clean_start=false` would keep nothing.
pub const DEFAULT_SESSION_EXPIRY: u32 = 86_400;

/// Which protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// MQTT 3.1.1 (`paho:`).
    V311,
    /// MQTT 5 (`paho-mqtt5:`).
    V5,
}

/// A password, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub(crate) String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A `paho:` or `paho-mqtt5:` endpoint's options.
#[derive(Clone)]
pub struct MqttOptions {
    /// The URI as written (shown only through [`camel_api::redact_url`]).
    pub uri: String,
    /// The protocol.
    pub protocol: Protocol,
    /// The topic a producer publishes to, or the topic filter a consumer subscribes to
    /// (wildcards `+` and `#`, `$share/GROUP/FILTER` for a shared subscription).
    pub topic: String,
    /// Broker host.
    pub host: String,
    /// Broker port.
    pub port: u16,
    /// The client identifier; generated (unique per endpoint and process) when not given.
    pub client_id: Option<String>,
    /// QoS of the subscription and of published messages (Camel's default: 2).
    pub qos: u8,
    /// Published messages are retained.
    pub retained: bool,
    /// User name for the broker.
    pub user_name: Option<String>,
    /// Password for the broker.
    pub password: Option<Password>,
    /// Keep-alive interval.
    pub keep_alive: Duration,
    /// Longest wait for the TCP connection and the broker's CONNACK.
    pub connection_timeout: Duration,
    /// Reconnect after the connection was lost (otherwise the consumer fails).
    pub automatic_reconnect: bool,
    /// Longest wait between two connection attempts.
    pub max_reconnect_delay: Duration,
    /// Start without the session the broker kept (`clean_start` / `clean_session`).
    pub clean_start: bool,
    /// MQTT 5: how long the broker keeps the session after a disconnect, in seconds.
    pub session_expiry_interval: Option<u32>,
    /// Most QoS 1/2 messages a consumer holds unacknowledged (MQTT 5: sent to the broker
    /// as Receive Maximum; MQTT 3.1.1: enforced by the consumer). A producer waits for at
    /// most this many acknowledgements at once.
    pub max_inflight: u16,
    /// Largest packet sent or received, in bytes.
    pub maximum_packet_size: u32,
}

impl fmt::Debug for MqttOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URI as written may carry a password, as a parameter or in broker_url.
        f.debug_struct("MqttOptions")
            .field("uri", &camel_api::redact_url(&self.uri))
            .field("protocol", &self.protocol)
            .field("topic", &self.topic)
            .field("broker", &format!("{}:{}", self.host, self.port))
            .field("client_id", &self.client_id)
            .field("qos", &self.qos)
            .field("clean_start", &self.clean_start)
            .field("max_inflight", &self.max_inflight)
            .finish_non_exhaustive()
    }
}

impl MqttOptions {
    /// Reads the options from a URI of `protocol`, rejecting unknown parameters.
    pub fn from_uri(mut uri: EndpointUri, protocol: Protocol) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let invalid = |why: String| CamelError::invalid_uri(raw.clone(), why);
        let topic = percent_decode(uri.path().trim());
        if topic.is_empty() {
            return Err(invalid(
                "the URI needs a topic, as in paho-mqtt5:sensors/temperature".into(),
            ));
        }
        let p = &mut uri.parameters;
        // The two schemes name the session flag differently; say so rather than only
        // "unknown parameter".
        let (theirs, ours) = match protocol {
            Protocol::V5 => ("clean_session", "clean_start"),
            Protocol::V311 => ("clean_start", "clean_session"),
        };
        if p.contains(theirs) {
            return Err(invalid(format!(
                "{} is the other MQTT scheme's name; this one calls it {}",
                p.written(theirs),
                p.written(ours)
            )));
        }
        let broker_url = p
            .take_str("broker_url")
            .unwrap_or_else(|| DEFAULT_BROKER_URL.to_string());
        let (host, port, url_user, url_password) = broker(&broker_url).map_err(invalid)?;
        let client_id = p.take_str("client_id").filter(|c| !c.is_empty());
        let qos = p.take::<u8>("qos")?.unwrap_or(2);
        if qos > 2 {
            return Err(invalid(format!("qos must be 0, 1 or 2, not {qos}")));
        }
        let retained = p.take_bool("retained")?.unwrap_or(false);
        let user_name = p.take_str("user_name").or(url_user);
        let password = p.take_str("password").or(url_password).map(Password);
        let keep_alive = Duration::from_secs(p.take::<u64>("keep_alive_interval")?.unwrap_or(60));
        let connection_timeout =
            Duration::from_secs(p.take::<u64>("connection_timeout")?.unwrap_or(30).max(1));
        let automatic_reconnect = p.take_bool("automatic_reconnect")?.unwrap_or(true);
        let max_reconnect_delay = Duration::from_millis(
            p.take::<u64>("max_reconnect_delay")?
                .unwrap_or(128_000)
                .max(1),
        );
        let maximum_packet_size = p.take::<u32>("maximum_packet_size")?.unwrap_or(1024 * 1024);
        if maximum_packet_size < 64 {
            return Err(invalid(
                "maximum_packet_size must be at least 64 bytes".into(),
            ));
        }
        let (clean_start, session_expiry_interval, max_inflight) = match protocol {
            Protocol::V5 => {
                let clean_start = p.take_bool("clean_start")?.unwrap_or(true);
                // Camel's -1 means "not set".
                let expiry = p
                    .take::<i64>("session_expiry_interval")?
                    .filter(|e| *e >= 0);
                let expiry = match expiry {
                    Some(e) => Some(u32::try_from(e).map_err(|_| {
                        invalid("session_expiry_interval is at most 4294967295 seconds".into())
                    })?),
                    None if !clean_start => Some(DEFAULT_SESSION_EXPIRY),
                    None => None,
                };
                let receive_maximum = p.take::<u16>("receive_maximum")?.unwrap_or(100);
                (clean_start, expiry, receive_maximum)
            }
            Protocol::V311 => {
                let clean_session = p.take_bool("clean_session")?.unwrap_or(true);
                if let Some(v) = p.take_str("mqtt_version") {
                    if v.trim() != "4" {
                        return Err(invalid(format!(
                            "mqtt_version `{v}`: only 4 (MQTT 3.1.1) is supported; use paho-mqtt5: for MQTT 5"
                        )));
                    }
                }
                let max_inflight = p.take::<u16>("max_inflight")?.unwrap_or(100);
                (clean_session, None, max_inflight)
            }
        };
        if max_inflight == 0 {
            return Err(invalid(
                "receive_maximum / max_inflight must be at least 1".into(),
            ));
        }
        let known: Vec<&str> = COMMON_PARAMETERS
            .iter()
            .chain(match protocol {
                Protocol::V5 => V5_PARAMETERS,
                Protocol::V311 => V311_PARAMETERS,
            })
            .copied()
            .collect();
        uri.parameters.finish(&known)?;
        Ok(MqttOptions {
            uri: raw,
            protocol,
            topic,
            host,
            port,
            client_id,
            qos,
            retained,
            user_name,
            password,
            keep_alive,
            connection_timeout,
            automatic_reconnect,
            max_reconnect_delay,
            clean_start,
            session_expiry_interval,
            max_inflight,
            maximum_packet_size,
        })
    }

    /// True when the broker keeps the session (and its unacknowledged messages) across
    /// connections: what redelivery after a failed route relies on.
    pub fn persistent(&self) -> bool {
        !self.clean_start
    }
}

type Broker = (String, u16, Option<String>, Option<String>);

/// Host, port and user information of `tcp://[user[:password]@]host[:port]`.
fn broker(url: &str) -> Result<Broker, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("broker_url must be a URL, as in tcp://127.0.0.1:1883".into());
    };
    match scheme.to_ascii_lowercase().as_str() {
        "tcp" | "mqtt" => {}
        "ssl" | "mqtts" | "wss" | "ws" => {
            return Err(format!(
                "broker_url scheme `{scheme}` is not supported: this component speaks plain TCP (tcp://)"
            ))
        }
        other => return Err(format!("broker_url scheme `{other}`: expected tcp://")),
    }
    let authority = rest.split('/').next().unwrap_or_default();
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((info, hp)) => (Some(info), hp),
        None => (None, authority),
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
            h,
            p.parse::<u16>()
                .map_err(|_| "broker_url has a port that is not a number".to_string())?,
        ),
        _ => (host_port, 1883),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err("broker_url needs a host, as in tcp://127.0.0.1:1883".into());
    }
    let (name, password) = match user.map(|u| u.split_once(':')) {
        Some(Some((n, p))) => (Some(percent_decode(n)), Some(percent_decode(p))),
        Some(None) => (user.map(percent_decode), None),
        None => (None, None),
    };
    Ok((host.to_string(), port, name, password))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v5(uri: &str) -> Result<MqttOptions, CamelError> {
        MqttOptions::from_uri(EndpointUri::parse(uri)?, Protocol::V5)
    }

    fn v311(uri: &str) -> Result<MqttOptions, CamelError> {
        MqttOptions::from_uri(EndpointUri::parse(uri)?, Protocol::V311)
    }

    #[test]
    fn camel_names_and_defaults() {
        let o = v5("paho-mqtt5:sensors/+/t?brokerUrl=tcp://127.0.0.1:1884&qos=1&clientId=c1&cleanStart=false").unwrap();
        assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 1884));
        assert_eq!(o.topic, "sensors/+/t");
        assert_eq!(o.qos, 1);
        assert_eq!(o.client_id.as_deref(), Some("c1"));
        assert!(o.persistent());
        assert_eq!(o.session_expiry_interval, Some(DEFAULT_SESSION_EXPIRY));
        let o = v5("paho-mqtt5:a?sessionExpiryInterval=-1").unwrap();
        assert_eq!(o.qos, 2, "Camel's default");
        assert!(!o.persistent());
        assert_eq!(o.session_expiry_interval, None);
        assert_eq!((o.host.as_str(), o.port), ("localhost", 1883));
        let o = v311("paho:a/%23?cleanSession=false&maxInflight=7&mqttVersion=4").unwrap();
        assert_eq!(o.topic, "a/#");
        assert_eq!(o.max_inflight, 7);
        assert!(o.persistent());
    }

    #[test]
    fn credentials_come_from_options_or_the_url_and_never_show() {
        let o = v5("paho-mqtt5:a?brokerUrl=tcp://app:s%40cret@h:1883").unwrap();
        assert_eq!(o.user_name.as_deref(), Some("app"));
        assert_eq!(o.password.as_ref().map(|p| p.0.as_str()), Some("s@cret"));
        let o = v5("paho-mqtt5:a?userName=u&password=hunter2").unwrap();
        let shown = format!("{:?} {o:?}", o.password);
        assert!(!shown.contains("hunter2"), "{shown}");
        let o = v5("paho-mqtt5:a?brokerUrl=tcp://app:hunter3@h:1883").unwrap();
        assert!(!format!("{o:?}").contains("hunter3"));
    }

    #[test]
    fn mistakes_are_refused_with_the_reason() {
        let e = v5("paho-mqtt5:a?qos=3").unwrap_err();
        assert!(e.to_string().contains("qos must be"), "{e}");
        let e = v5("paho-mqtt5:a?brokerUrl=ssl://h:8883").unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = v5("paho-mqtt5:a?cleanSession=false").unwrap_err();
        assert!(e.to_string().contains("cleanStart"), "{e}");
        let e = v311("paho:a?cleanStart=false").unwrap_err();
        assert!(e.to_string().contains("cleanSession"), "{e}");
        let e = v311("paho:a?receiveMaximum=5").unwrap_err();
        assert!(e.to_string().contains("unknown parameter"), "{e}");
        let e = v311("paho:a?mqttVersion=3").unwrap_err();
        assert!(e.to_string().contains("only 4"), "{e}");
        let e = v5("paho-mqtt5:?qos=1").unwrap_err();
        assert!(e.to_string().contains("needs a topic"), "{e}");
        let e = v5("paho-mqtt5:a?receiveMaximum=0").unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
    }
}
