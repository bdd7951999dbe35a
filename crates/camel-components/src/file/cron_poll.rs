//! `scheduler=spring|quartz` with `scheduler.cron`: the file consumer polls on a cron
//! expression instead of every `delay`, on the same cron support as `cron:` and `quartz:`.

use std::sync::Arc;

use camel_api::{CamelError, Parameters};

use crate::schedule::{parse_zone_option, CronExpression};

/// Takes `scheduler` and its `scheduler.*` options: the cron expression to poll on, or
/// `None` for the default fixed-delay polling.
pub(super) fn take(
    p: &mut Parameters,
    uri: &Arc<str>,
) -> Result<Option<CronExpression>, CamelError> {
    let bad = |reason: String| CamelError::invalid_uri(uri.clone(), reason);
    let scheduler = p.take_str("scheduler");
    let cron = p.take_str("scheduler.cron");
    let zone = p.take_str("scheduler.time_zone");
    // Quartz's trigger names: nothing here is looked up by them.
    p.take_str("scheduler.trigger_id");
    p.take_str("scheduler.trigger_group");
    match scheduler.as_deref().map(str::trim) {
        None | Some("none") | Some("") => {
            if cron.is_some() {
                return Err(bad(
                    "`scheduler.cron` needs `scheduler=spring` or `scheduler=quartz`".into(),
                ));
            }
            Ok(None)
        }
        Some("spring" | "quartz") => {
            let text = cron.ok_or_else(|| {
                bad("`scheduler` needs `scheduler.cron`, as in `scheduler=quartz&scheduler.cron=0/10+*+*+*+*+?`".into())
            })?;
            let expression = CronExpression::parse(&text)
                .map_err(|e| bad(format!("parameter `scheduler.cron`: {e}")))?;
            match zone {
                None => Ok(Some(expression)),
                Some(zone) => {
                    let zone = parse_zone_option(&zone)
                        .map_err(|e| bad(format!("parameter `scheduler.time_zone`: {e}")))?;
                    Ok(Some(expression.in_zone(zone)))
                }
            }
        }
        Some(other) => Err(bad(format!(
            "parameter `scheduler` = `{other}`: use `spring` or `quartz` (with `scheduler.cron`); \
             a custom scheduler bean is not supported"
        ))),
    }
}
