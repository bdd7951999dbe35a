//! `connect_timeout` in a PostgreSQL URL, as libpq spells it (whole seconds; `500ms`,
//! `2s` are accepted too). sqlx does not know the option and would only warn it away;
//! here it bounds how long a connection may take, so an unreachable database answers
//! after that time instead of the pool's 30 s.

use std::time::Duration;

use crate::error::{OutboxError, Result};

/// The URL without `connect_timeout`, and the timeout when it was given.
pub(crate) fn take(url: &str) -> Result<(String, Option<Duration>)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), None));
    };
    let mut timeout = None;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("connect_timeout", value)) => timeout = Some(parse(value)?),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, timeout))
}

fn parse(value: &str) -> Result<Duration> {
    let seconds = value.trim().parse::<u64>().map(Duration::from_secs);
    seconds
        .ok()
        .or_else(|| camel_api::parse_duration(value))
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            OutboxError::Config(format!(
                "connect_timeout `{value}`: expected seconds (5) or a duration (500ms, 2s)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_timeout_out_of_the_url() {
        let (url, t) = take("postgres://u@h:1/db?connect_timeout=3&sslmode=disable").unwrap();
        assert_eq!(url, "postgres://u@h:1/db?sslmode=disable");
        assert_eq!(t, Some(Duration::from_secs(3)));
        let (url, t) = take("postgres://u@h/db?connect_timeout=500ms").unwrap();
        assert_eq!(
            (url.as_str(), t),
            ("postgres://u@h/db", Some(Duration::from_millis(500)))
        );
        assert_eq!(take("postgres://h/db").unwrap().1, None);
        assert!(take("postgres://h/db?connect_timeout=soon").is_err());
    }
}
