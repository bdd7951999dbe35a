//! The endpoint options, read from the URI with the names of Camel's
//! `pg-replication-slot` component (snake_case; camelCase accepted) and ours for what a
//! streaming consumer adds.
//!
//! `pg-replication-slot:[HOST[:PORT]/]DATABASE/SLOT[:pgoutput]?user=…&password=…`

use std::fmt;
use std::time::Duration;

use camel_api::{percent_decode, CamelError, EndpointUri};

/// Parameters the endpoint takes (snake_case).
const PARAMETERS: &[&str] = &[
    "user",
    "password",
    "auto_create_slot",
    "status_interval",
    "publication",
    "auto_create_publication",
    "tables",
    "snapshot",
    "max_inflight",
    "reconnect_delay",
    "max_reconnect_delay",
];

/// The only output plugin this component speaks.
pub const OUTPUT_PLUGIN: &str = "pgoutput";

/// A password, never shown.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Password(pub(crate) String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A `pg-replication-slot:` endpoint's options.
#[derive(Clone)]
pub struct CdcOptions {
    /// The URI as written (shown only through [`camel_api::redact_url`]).
    pub uri: String,
    /// Server host (Camel's default: localhost).
    pub host: String,
    /// Server port (default 5432).
    pub port: u16,
    /// The database whose changes are streamed.
    pub database: String,
    /// The logical replication slot (`[a-z0-9_]{1,63}`).
    pub slot: String,
    /// User; needs the REPLICATION attribute (Camel's default: postgres).
    pub user: String,
    /// Password (none: trust or peer authentication).
    pub password: Password,
    /// Create the slot when it does not exist (Camel's `autoCreateSlot`, default true).
    pub auto_create_slot: bool,
    /// Longest wait before a newly confirmed position is reported to the server
    /// (Camel's `statusInterval`; our default is 1 s, Camel's 10 s: what was confirmed
    /// and not yet reported comes again after a crash).
    pub status_interval: Duration,
    /// The publication naming the tables streamed (ours; default: the slot's name).
    pub publication: String,
    /// Create the publication when it does not exist (ours, default true).
    pub auto_create_publication: bool,
    /// Tables of a publication this consumer creates (`schema.table` or `table`, comma
    /// separated); empty: every table of the database (`FOR ALL TABLES`).
    pub tables: Vec<String>,
    /// Deliver every row of the publication's tables once, as `snapshot` changes, when
    /// the slot is created (ours, default false).
    pub snapshot: bool,
    /// Most exchanges unsettled at once; at the bound the consumer stops reading the
    /// stream (ours, default 1: changes go through the route one at a time, in order).
    pub max_inflight: usize,
    /// First wait before reconnecting after a failed route or a lost connection.
    pub reconnect_delay: Duration,
    /// Longest such wait (it doubles while failures repeat).
    pub max_reconnect_delay: Duration,
}

impl fmt::Debug for CdcOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CdcOptions")
            .field("uri", &camel_api::redact_url(&self.uri))
            .field("server", &format!("{}:{}", self.host, self.port))
            .field("database", &self.database)
            .field("slot", &self.slot)
            .field("publication", &self.publication)
            .field("user", &self.user)
            .field("max_inflight", &self.max_inflight)
            .finish_non_exhaustive()
    }
}

/// True for a name PostgreSQL takes as a slot or publication without quoting, and that
/// needs none in our statements.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

impl CdcOptions {
    /// Reads the options from the URI, rejecting unknown parameters.
    pub fn from_uri(mut uri: EndpointUri) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let invalid = |why: String| CamelError::invalid_uri(raw.clone(), why);
        let path = percent_decode(uri.path().trim());
        let parts: Vec<&str> = path.split('/').collect();
        let (server, database, slot_and_plugin) = match parts.as_slice() {
            [server, db, slot] => (Some(*server), *db, *slot),
            [db, slot] => (None, *db, *slot),
            _ => {
                return Err(invalid(
                    "expected pg-replication-slot:[HOST[:PORT]/]DATABASE/SLOT[:pgoutput]".into(),
                ))
            }
        };
        let (host, port) = match server {
            None => ("localhost".to_string(), 5432),
            Some(s) => match s.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_string(),
                    p.parse::<u16>()
                        .map_err(|_| invalid(format!("port `{p}` is not a number")))?,
                ),
                None => (s.to_string(), 5432),
            },
        };
        if host.is_empty() || database.is_empty() {
            return Err(invalid("the URI needs a host and a database".into()));
        }
        let (slot, plugin) = match slot_and_plugin.split_once(':') {
            Some((s, p)) => (s, Some(p)),
            None => (slot_and_plugin, None),
        };
        if let Some(p) = plugin {
            if p != OUTPUT_PLUGIN {
                return Err(invalid(format!(
                    "output plugin `{p}`: this component streams with pgoutput only (Camel's default test_decoding is text meant for people)"
                )));
            }
        }
        if !valid_name(slot) {
            return Err(invalid(format!(
                "slot name `{slot}`: use lower-case letters, digits and `_` (at most 63, not starting with a digit)"
            )));
        }
        let p = &mut uri.parameters;
        let user = p.take_str("user").unwrap_or_else(|| "postgres".into());
        let password = Password(p.take_str("password").unwrap_or_default());
        let auto_create_slot = p.take_bool("auto_create_slot")?.unwrap_or(true);
        let status_interval = p
            .take_duration("status_interval")?
            .unwrap_or(Duration::from_secs(1))
            .max(Duration::from_millis(100));
        let publication = p
            .take_str("publication")
            .unwrap_or_else(|| slot.to_string());
        if !valid_name(&publication) {
            return Err(invalid(format!(
                "publication name `{publication}`: use lower-case letters, digits and `_`"
            )));
        }
        let auto_create_publication = p.take_bool("auto_create_publication")?.unwrap_or(true);
        let tables: Vec<String> = p
            .take_str("tables")
            .map(|t| {
                t.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        for t in &tables {
            if !t.split('.').all(valid_name) || t.split('.').count() > 2 {
                return Err(invalid(format!(
                    "table `{t}`: write table or schema.table in lower-case letters, digits and `_`"
                )));
            }
        }
        let snapshot = p.take_bool("snapshot")?.unwrap_or(false);
        let max_inflight = p.take::<usize>("max_inflight")?.unwrap_or(1);
        if max_inflight == 0 {
            return Err(invalid("max_inflight must be at least 1".into()));
        }
        let reconnect_delay = p
            .take_duration("reconnect_delay")?
            .unwrap_or(Duration::from_millis(500));
        let max_reconnect_delay = p
            .take_duration("max_reconnect_delay")?
            .unwrap_or(Duration::from_secs(30))
            .max(reconnect_delay);
        uri.parameters.finish(PARAMETERS)?;
        Ok(CdcOptions {
            uri: raw,
            host,
            port,
            database: database.to_string(),
            slot: slot.to_string(),
            user,
            password,
            auto_create_slot,
            status_interval,
            publication,
            auto_create_publication,
            tables,
            snapshot,
            max_inflight,
            reconnect_delay,
            max_reconnect_delay,
        })
    }

    /// `host:port/database`, for messages (never with credentials).
    pub fn server(&self) -> String {
        format!("{}:{}/{}", self.host, self.port, self.database)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(uri: &str) -> Result<CdcOptions, CamelError> {
        CdcOptions::from_uri(EndpointUri::parse(uri)?)
    }

    #[test]
    fn camel_shape_and_defaults() {
        let o = parse("pg-replication-slot:127.0.0.1:5433/shop/orders_slot:pgoutput?user=app&autoCreateSlot=false&statusInterval=2s").unwrap();
        assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 5433));
        assert_eq!(o.database, "shop");
        assert_eq!(o.slot, "orders_slot");
        assert_eq!(o.publication, "orders_slot");
        assert_eq!(o.user, "app");
        assert!(!o.auto_create_slot);
        assert_eq!(o.status_interval, Duration::from_secs(2));
        assert_eq!(o.max_inflight, 1);
        let o =
            parse("pg-replication-slot:shop/s1?tables=public.orders,items&maxInflight=8").unwrap();
        assert_eq!((o.host.as_str(), o.port), ("localhost", 5432));
        assert_eq!(o.tables, vec!["public.orders", "items"]);
        assert_eq!(o.max_inflight, 8);
    }

    #[test]
    fn mistakes_are_refused_with_the_reason() {
        let e = parse("pg-replication-slot:h/db/s:test_decoding").unwrap_err();
        assert!(e.to_string().contains("pgoutput only"), "{e}");
        let e = parse("pg-replication-slot:h/db/Bad-Slot").unwrap_err();
        assert!(e.to_string().contains("slot name"), "{e}");
        let e = parse("pg-replication-slot:db").unwrap_err();
        assert!(e.to_string().contains("expected"), "{e}");
        let e = parse("pg-replication-slot:db/s?tables=a;drop").unwrap_err();
        assert!(e.to_string().contains("table `a;drop`"), "{e}");
        let e = parse("pg-replication-slot:db/s?maxInflight=0").unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = parse("pg-replication-slot:db/s?slotOption=1").unwrap_err();
        assert!(e.to_string().contains("unknown parameter"), "{e}");
    }

    #[test]
    fn the_password_never_shows() {
        let o = parse("pg-replication-slot:db/s?password=hunter2").unwrap();
        assert!(!format!("{o:?}").contains("hunter2"));
    }
}
