//! The `cron` and `quartz` components and their endpoint.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
    Parameters,
};

use super::consumer::{CronConsumer, Trigger};
use super::expression::parse_zone;
use super::{CronExpression, ScheduleError, SystemClock, WallClock};

const CRON_OPTIONS: &[&str] = &["schedule", "time_zone"];
const QUARTZ_OPTIONS: &[&str] = &[
    "cron",
    "time_zone",
    "trigger.time_zone",
    "trigger_start_delay",
];
/// Quartz's group when the URI names none.
const DEFAULT_GROUP: &str = "Camel";
/// Camel starts a Quartz trigger this long after the route, so the route is fully up.
const DEFAULT_START_DELAY: Duration = Duration::from_millis(500);

/// `cron:NAME?schedule=EXPR` — Camel's generic cron endpoint.
#[derive(Clone, Debug)]
pub struct CronComponent {
    clock: Arc<dyn WallClock>,
}

impl CronComponent {
    /// On the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// On `clock` (a [`super::TokioClock`] in tests on paused time).
    pub fn with_clock(clock: Arc<dyn WallClock>) -> Self {
        CronComponent { clock }
    }
}

impl Default for CronComponent {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for CronComponent {
    fn scheme(&self) -> &str {
        "cron"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name = crate::endpoint_name(&uri, "cron:tick?schedule=0/2+*+*+*+*+?")?;
        let raw = uri.raw();
        let p = &mut uri.parameters;
        // Camel's cron endpoint takes five to seven fields: five leave the seconds out
        // (`0/2 * * * ?` fires every two minutes, at second 0). Quartz's takes six or seven.
        if let Some(text) = p.take_str("schedule") {
            let fields: Vec<&str> = text.split(['+', ' ']).filter(|f| !f.is_empty()).collect();
            let text = if fields.len() == 5 {
                format!("0 {}", fields.join(" "))
            } else {
                text
            };
            p.set("schedule", text);
        }
        let expression = expression(p, &raw, "schedule", "cron:tick?schedule=0/2+*+*+*+*+?")?;
        let expression = zone(p, &raw, &["time_zone"], expression)?;
        uri.parameters.finish(CRON_OPTIONS)?;
        Ok(Arc::new(CronEndpoint {
            uri: raw,
            trigger: Trigger {
                name: name.into(),
                group: DEFAULT_GROUP.into(),
                expression,
                start_delay: Duration::ZERO,
            },
            clock: self.clock.clone(),
        }))
    }
}

/// `quartz:[GROUP/]NAME?cron=EXPR` — a cron trigger, without Quartz's job store.
#[derive(Clone, Debug)]
pub struct QuartzComponent {
    clock: Arc<dyn WallClock>,
}

impl QuartzComponent {
    /// On the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// On `clock` (a [`super::TokioClock`] in tests on paused time).
    pub fn with_clock(clock: Arc<dyn WallClock>) -> Self {
        QuartzComponent { clock }
    }
}

impl Default for QuartzComponent {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for QuartzComponent {
    fn scheme(&self) -> &str {
        "quartz"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let example = "quartz:group/name?cron=0/2+*+*+*+*+?";
        let path = crate::endpoint_name(&uri, example)?;
        let (group, name) = match path.split_once('/') {
            Some((group, name)) => (group.to_string(), name.to_string()),
            None => (DEFAULT_GROUP.to_string(), path),
        };
        let raw = uri.raw();
        if group.is_empty() || name.is_empty() || name.contains('/') {
            return Err(CamelError::invalid_uri(
                raw,
                format!("the path is `[group/]name`, as in `{example}`"),
            ));
        }
        let p = &mut uri.parameters;
        if !p.contains("cron") {
            return Err(CamelError::invalid_uri(
                raw,
                "a quartz endpoint needs `cron` here (Quartz's simple triggers are not \
                 supported: use `timer:` or `scheduler:` for a fixed period)",
            ));
        }
        let expression = expression(p, &raw, "cron", example)?;
        let expression = zone(p, &raw, &["time_zone", "trigger.time_zone"], expression)?;
        let start_delay = p
            .take_duration("trigger_start_delay")?
            .unwrap_or(DEFAULT_START_DELAY);
        uri.parameters.finish(QUARTZ_OPTIONS)?;
        Ok(Arc::new(CronEndpoint {
            uri: raw,
            trigger: Trigger {
                name: name.into(),
                group: group.into(),
                expression,
                start_delay,
            },
            clock: self.clock.clone(),
        }))
    }
}

/// Takes the required cron expression in `option`.
fn expression(
    p: &mut Parameters,
    uri: &Arc<str>,
    option: &str,
    example: &str,
) -> Result<CronExpression, CamelError> {
    let text = p.take_str(option).ok_or_else(|| {
        CamelError::invalid_uri(
            uri.clone(),
            format!("parameter `{option}` is required, as in `{example}`"),
        )
    })?;
    CronExpression::parse(&text).map_err(|e| option_error(uri, option, e))
}

/// Applies the time zone given under any of `options`.
fn zone(
    p: &mut Parameters,
    uri: &Arc<str>,
    options: &[&str],
    expression: CronExpression,
) -> Result<CronExpression, CamelError> {
    let mut expression = expression;
    for option in options {
        if let Some(text) = p.take_str(option) {
            let zone = parse_zone(&text).map_err(|e| option_error(uri, option, e))?;
            expression = expression.in_zone(zone);
        }
    }
    Ok(expression)
}

fn option_error(uri: &Arc<str>, option: &str, error: ScheduleError) -> CamelError {
    CamelError::invalid_uri(uri.clone(), format!("parameter `{option}`: {error}"))
}

#[derive(Debug)]
struct CronEndpoint {
    uri: Arc<str>,
    trigger: Trigger,
    clock: Arc<dyn WallClock>,
}

impl Endpoint for CronEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "a cron schedule can only start a route (`from`), not be sent to",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(CronConsumer {
            trigger: self.trigger.clone(),
            clock: self.clock.clone(),
        }))
    }
}
