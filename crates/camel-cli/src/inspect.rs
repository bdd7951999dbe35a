//! `camel get`, `camel top` and `camel cmd`: a running `camel run --admin-addr` seen and
//! steered from a terminal, over its admin API, as Camel JBang's commands of the same
//! names do for a running Camel. Route states come from `GET /routes`, counts and
//! durations from the Prometheus text of `GET /metrics`, health from `/health/ready`.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The environment variable that may name the admin address instead of `--admin-addr`.
const ADDR_ENV: &str = "CAMEL_ADMIN_ADDR";
/// How long one request to the admin API may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a response read (a scrape of many routes stays far below).
const MAX_RESPONSE: usize = 16 * 1024 * 1024;

/// Where the admin API is and how to be let in.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ClientArgs {
    /// The admin API of a running `camel run --admin-addr`: ADDR:PORT, or a bare PORT on
    /// 127.0.0.1. Also read from CAMEL_ADMIN_ADDR.
    #[arg(long = "admin-addr", value_name = "ADDR", env = ADDR_ENV, default_value = "127.0.0.1:9464", value_parser = crate::admin::parse_addr)]
    addr: SocketAddr,
    /// File holding the admin API's bearer token; CAMEL_ADMIN_TOKEN may hold the token
    /// itself instead. Needed for everything but the health probes once the API has one.
    #[arg(long, value_name = "PATH")]
    admin_token_file: Option<PathBuf>,
}

/// `camel get WHAT`.
#[derive(Debug, clap::Args)]
pub(crate) struct GetArgs {
    #[command(subcommand)]
    what: GetWhat,
}

/// The options of each `camel get` command.
#[derive(Debug, clap::Args)]
struct GetOptions {
    #[command(flatten)]
    client: ClientArgs,
    /// `table` for people, `json` for scripts.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    output: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Table,
    Json,
}

#[derive(Debug, clap::Subcommand)]
enum GetWhat {
    /// Each route: status, uptime, exchanges total/failed/in flight, mean and p99
    /// duration, its `from`, and why its consumer fails if it does.
    #[command(alias = "route")]
    Routes(GetOptions),
    /// Readiness and each check (`/health/ready?details`); exits 1 while not ready.
    Health(GetOptions),
}

/// `camel top`.
#[derive(Debug, clap::Args)]
pub(crate) struct TopArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// Seconds between refreshes.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_interval)]
    interval: f64,
    /// Refreshes before exiting; 0 runs until Ctrl-C.
    #[arg(long, value_name = "N", default_value_t = 0)]
    iterations: u64,
}

/// `camel cmd ACTION ROUTE`.
#[derive(Debug, clap::Args)]
pub(crate) struct CmdArgs {
    /// What to do: start, stop, suspend or resume (Camel JBang's `start-route`, … are
    /// accepted too).
    #[arg(value_enum)]
    action: Action,
    /// The route's id.
    #[arg(required_unless_present = "id", conflicts_with = "id")]
    route: Option<String>,
    /// The route's id, as Camel JBang's `--id` gives it.
    #[arg(long)]
    id: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Action {
    #[value(alias = "start-route")]
    Start,
    #[value(alias = "stop-route")]
    Stop,
    #[value(alias = "suspend-route")]
    Suspend,
    #[value(alias = "resume-route")]
    Resume,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Start => "start",
            Action::Stop => "stop",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
        }
    }
}

fn parse_interval(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.1..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0.1 to 3600"
        )),
    }
}

/// Why a request to the admin API gave nothing to show.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    #[error("cannot reach the admin API at http://{addr}: {why} (is `camel run --admin-addr {addr}` running?)")]
    Unreachable { addr: SocketAddr, why: String },
    #[error("the admin API at http://{0} wants its token: give --admin-token-file PATH or CAMEL_ADMIN_TOKEN")]
    Unauthorized(SocketAddr),
    #[error("{what}: {status}: {message}")]
    Refused {
        what: String,
        status: u16,
        message: String,
    },
    #[error("{what}: the answer is not what the admin API sends: {why}")]
    Garbled { what: String, why: String },
    #[error("--admin-token-file {path}: {why}")]
    Token { path: PathBuf, why: String },
}

/// A client of one admin API.
pub(crate) struct Client {
    http: reqwest::Client,
    addr: SocketAddr,
    token: Option<String>,
    /// The most of one answer read.
    max_response: usize,
}

impl Client {
    pub(crate) fn new(args: &ClientArgs) -> Result<Client, ClientError> {
        let token = match &args.admin_token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ClientError::Token {
                    path: path.clone(),
                    why: e.to_string(),
                })?;
                let token = text.trim().to_string();
                if token.is_empty() {
                    return Err(ClientError::Token {
                        path: path.clone(),
                        why: "the file is empty".into(),
                    });
                }
                Some(token)
            }
            None => std::env::var(crate::admin::TOKEN_ENV)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        };
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            // The admin API never redirects; a redirect would carry the token elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Unreachable {
                addr: args.addr,
                why: e.to_string(),
            })?;
        Ok(Client {
            http,
            addr: args.addr,
            token,
            max_response: MAX_RESPONSE,
        })
    }

    /// The same client, reading answers up to `bytes`.
    pub(crate) fn with_max_response(mut self, bytes: usize) -> Client {
        self.max_response = bytes;
        self
    }

    /// `METHOD path` with the token; the status and the body as text.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> Result<(u16, String), ClientError> {
        let url = format!("http://{}{path}", self.addr);
        let mut req = self.http.request(method, url);
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        let unreachable = |e: reqwest::Error| ClientError::Unreachable {
            addr: self.addr,
            why: error_chain(&e),
        };
        let mut resp = req.send().await.map_err(unreachable)?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > self.max_response {
                return Err(ClientError::Garbled {
                    what: path.to_string(),
                    why: format!("more than {} bytes", self.max_response),
                });
            }
            body.extend_from_slice(&chunk);
        }
        if status == 401 {
            return Err(ClientError::Unauthorized(self.addr));
        }
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// `GET path` as JSON; a status outside 2xx is an error unless `also_ok` holds it.
    pub(crate) async fn json(
        &self,
        method: reqwest::Method,
        path: &str,
        also_ok: &[u16],
    ) -> Result<(u16, Value), ClientError> {
        let (status, text) = self.send(method, path).await?;
        let value: Value = serde_json::from_str(&text).map_err(|e| ClientError::Garbled {
            what: path.to_string(),
            why: e.to_string(),
        })?;
        if !(200..300).contains(&status) && !also_ok.contains(&status) {
            let message = value["error"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            return Err(ClientError::Refused {
                what: path.to_string(),
                status,
                message,
            });
        }
        Ok((status, value))
    }

    /// The routes, with their counts and durations from a scrape.
    async fn route_rows(&self) -> Result<Vec<RouteRow>, ClientError> {
        let (_, routes) = self.json(reqwest::Method::GET, "/routes", &[]).await?;
        let scrape = self.metrics().await?;
        Ok(rows(&routes, &scrape))
    }

    async fn metrics(&self) -> Result<Scrape, ClientError> {
        let (status, text) = self.send(reqwest::Method::GET, "/metrics").await?;
        if status != 200 {
            return Err(ClientError::Refused {
                what: "/metrics".into(),
                status,
                message: text.chars().take(200).collect(),
            });
        }
        Ok(Scrape::parse(&text))
    }
}

/// The message of an error and of its sources, which say why a connection failed.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// One sample of a Prometheus text scrape: value by metric name and labels.
#[derive(Debug, Default)]
pub(crate) struct Scrape {
    samples: Vec<Sample>,
}

#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

impl Scrape {
    /// Reads the text exposition format; lines it cannot read are passed over.
    pub(crate) fn parse(text: &str) -> Scrape {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(parse_sample)
            .collect();
        Scrape { samples }
    }

    /// Every sample of `name`: its labels and value.
    pub(crate) fn samples_of<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (&'a BTreeMap<String, String>, f64)> + 'a {
        self.samples
            .iter()
            .filter(move |s| s.name == name)
            .map(|s| (&s.labels, s.value))
    }

    /// The sum over the samples of `name` whose `routeId` is `route`.
    fn route_sum(&self, name: &str, route: &str) -> Option<f64> {
        let mut found = None;
        for s in &self.samples {
            if s.name == name && s.labels.get("routeId").map(String::as_str) == Some(route) {
                *found.get_or_insert(0.0) += s.value;
            }
        }
        found
    }

    /// The upper bound of the bucket holding the 99th percentile of the route's
    /// durations, summed over outcomes; `None` without observations.
    fn route_p99(&self, route: &str) -> Option<f64> {
        let mut by_le: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for s in &self.samples {
            if s.name != "camel_route_policy_seconds_bucket"
                || s.labels.get("routeId").map(String::as_str) != Some(route)
            {
                continue;
            }
            let Some(le) = s.labels.get("le") else {
                continue;
            };
            let bound = if le == "+Inf" {
                f64::INFINITY
            } else {
                match le.parse::<f64>() {
                    Ok(b) => b,
                    Err(_) => continue,
                }
            };
            // Ordered by the bound's bits: they sort as the values do for positive floats.
            by_le.entry(bound.to_bits()).or_insert((bound, 0.0)).1 += s.value;
        }
        let count = by_le.values().map(|(_, c)| *c).fold(0.0, f64::max);
        if count <= 0.0 {
            return None;
        }
        by_le
            .values()
            .find(|(_, cumulative)| *cumulative >= 0.99 * count)
            .map(|(bound, _)| *bound)
    }
}

/// `name{a="x",b="y"} value [timestamp]` or `name value`; `None` for anything else.
fn parse_sample(line: &str) -> Option<Sample> {
    let line = line.trim();
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(mut body) = rest.strip_prefix('{') {
        loop {
            body = body.trim_start_matches([',', ' ']);
            if let Some(after) = body.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = body.find('=')?;
            let key = body[..eq].trim().to_string();
            body = body[eq + 1..].strip_prefix('"')?;
            let mut value = String::new();
            let mut chars = body.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '\\' => {
                        let (_, escaped) = chars.next()?;
                        value.push(if escaped == 'n' { '\n' } else { escaped });
                    }
                    '"' => break i,
                    c => value.push(c),
                }
            };
            body = &body[end + 1..];
            labels.insert(key, value);
        }
    }
    let value = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// One route as `camel get routes` shows it.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RouteRow {
    id: String,
    status: String,
    uptime_seconds: Option<f64>,
    total: Option<f64>,
    failed: Option<f64>,
    inflight: Option<f64>,
    mean_seconds: Option<f64>,
    p99_seconds: Option<f64>,
    from: String,
    failing: Option<String>,
}

pub(crate) fn rows(routes: &Value, scrape: &Scrape) -> Vec<RouteRow> {
    let empty = Vec::new();
    routes
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|r| {
            let id = r["id"].as_str()?.to_string();
            let count = scrape.route_sum("camel_route_policy_seconds_count", &id);
            let sum = scrape.route_sum("camel_route_policy_seconds_sum", &id);
            let mean = match (sum, count) {
                (Some(s), Some(c)) if c > 0.0 => Some(s / c),
                _ => None,
            };
            let mut status = r["status"].as_str().unwrap_or("?").to_string();
            if let Some(op) = r["operation"].as_str() {
                status = format!("{status} ({op})");
            }
            Some(RouteRow {
                status,
                uptime_seconds: scrape.route_sum("camel_route_uptime_seconds", &id),
                total: scrape.route_sum("camel_exchanges_total", &id),
                failed: scrape.route_sum("camel_exchanges_failed_total", &id),
                inflight: scrape.route_sum("camel_exchanges_inflight", &id),
                mean_seconds: mean,
                p99_seconds: scrape.route_p99(&id),
                from: r["from"].as_str().unwrap_or("").to_string(),
                failing: r["failing"].as_str().map(str::to_string),
                id,
            })
        })
        .collect()
}

/// Seconds as Camel JBang prints an age: `45s`, `3m12s`, `2h5m`, `3d4h`.
fn age(seconds: Option<f64>) -> String {
    let Some(s) = seconds.filter(|s| *s > 0.0) else {
        return "-".into();
    };
    let s = s as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

fn count(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{}", v.round() as u64))
}

/// A duration in the unit that keeps it short.
pub(crate) fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "-".into(),
        Some(s) if s.is_infinite() => ">60s".into(),
        Some(s) if s < 0.001 => format!("{:.0}µs", s * 1e6),
        Some(s) if s < 1.0 => format!("{:.1}ms", s * 1e3),
        Some(s) => format!("{s:.2}s"),
    }
}

/// Column-aligned text: the header, then the rows; the last column unpadded.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        for (i, cell) in row.iter().enumerate() {
            // Control characters of a route id or a reason never reach the terminal.
            let cell: String = cell
                .chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            if i == last {
                out.push_str(&cell);
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                out.push_str(&cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push('\n');
    }
    out
}

fn route_table(rows: &[RouteRow], rate: Option<&BTreeMap<String, f64>>) -> String {
    let mut header = vec!["ID", "STATUS", "AGE", "TOTAL", "FAILED", "INFLIGHT"];
    if rate.is_some() {
        header.push("RATE/S");
    }
    header.extend(["MEAN", "P99", "FROM"]);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                r.id.clone(),
                r.status.clone(),
                age(r.uptime_seconds),
                count(r.total),
                count(r.failed),
                count(r.inflight),
            ];
            if let Some(rate) = rate {
                row.push(
                    rate.get(&r.id)
                        .map_or_else(|| "-".into(), |v| format!("{v:.1}")),
                );
            }
            row.push(duration(r.mean_seconds));
            row.push(duration(r.p99_seconds));
            let mut from = r.from.clone();
            if let Some(why) = &r.failing {
                from.push_str(&format!("  (failing: {why})"));
            }
            row.push(from);
            row
        })
        .collect();
    table(&header, &cells)
}

pub(crate) fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// `camel get routes|health`.
pub(crate) async fn get(args: GetArgs) -> ExitCode {
    let (GetWhat::Routes(options) | GetWhat::Health(options)) = &args.what;
    let client = match Client::new(&options.client) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let output = options.output;
    match args.what {
        GetWhat::Routes(_) => {
            let rows = match client.route_rows().await {
                Ok(rows) => rows,
                Err(e) => return fail(e),
            };
            let text = match output {
                Output::Table => route_table(&rows, None),
                Output::Json => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&rows).unwrap_or_default()
                ),
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        GetWhat::Health(_) => {
            // Every check needs the token; without one, the checks that are down.
            let path = if client.token.is_some() {
                "/health/ready?details"
            } else {
                "/health/ready"
            };
            let (status, report) = match client.json(reqwest::Method::GET, path, &[503]).await {
                Ok(r) => r,
                Err(e) => return fail(e),
            };
            match output {
                Output::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                ),
                Output::Table => {
                    let empty = Vec::new();
                    let cells: Vec<Vec<String>> = report["checks"]
                        .as_array()
                        .unwrap_or(&empty)
                        .iter()
                        .map(|c| {
                            vec![
                                c["name"].as_str().unwrap_or("?").to_string(),
                                c["status"].as_str().unwrap_or("?").to_string(),
                                c["message"].as_str().unwrap_or("").to_string(),
                            ]
                        })
                        .collect();
                    println!("ready: {}", report["status"].as_str().unwrap_or("?"));
                    if !cells.is_empty() {
                        print!("{}", table(&["CHECK", "STATUS", "MESSAGE"], &cells));
                    }
                }
            }
            if status == 200 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// `camel top`: the routes by exchanges per second, refreshed.
pub(crate) async fn top(args: TopArgs) -> ExitCode {
    let client = match Client::new(&args.client) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let interval = Duration::from_secs_f64(args.interval);
    let terminal = std::io::stdout().is_terminal();
    let mut last: Option<(Instant, BTreeMap<String, f64>)> = None;
    let mut shown = 0u64;
    loop {
        let mut rows = match client.route_rows().await {
            Ok(rows) => rows,
            Err(e) => return fail(e),
        };
        let now = Instant::now();
        let totals: BTreeMap<String, f64> = rows
            .iter()
            .map(|r| (r.id.clone(), r.total.unwrap_or(0.0)))
            .collect();
        if let Some((then, before)) = &last {
            let secs = now.duration_since(*then).as_secs_f64().max(1e-3);
            let rate: BTreeMap<String, f64> = totals
                .iter()
                .map(|(id, t)| {
                    (
                        id.clone(),
                        (t - before.get(id).copied().unwrap_or(*t)).max(0.0) / secs,
                    )
                })
                .collect();
            rows.sort_by(|a, b| {
                let ra = rate.get(&a.id).copied().unwrap_or(0.0);
                let rb = rate.get(&b.id).copied().unwrap_or(0.0);
                rb.total_cmp(&ra)
                    .then(
                        b.inflight
                            .unwrap_or(0.0)
                            .total_cmp(&a.inflight.unwrap_or(0.0)),
                    )
                    .then(a.id.cmp(&b.id))
            });
            let mut out = std::io::stdout().lock();
            if terminal {
                // Clear the screen and go home, as top does.
                let _ = write!(out, "\x1b[2J\x1b[H");
            }
            let _ = write!(out, "{}", route_table(&rows, Some(&rate)));
            if !terminal {
                let _ = writeln!(out);
            }
            let _ = out.flush();
            shown += 1;
            if args.iterations != 0 && shown >= args.iterations {
                return ExitCode::SUCCESS;
            }
        }
        last = Some((now, totals));
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
        }
    }
}

/// `camel cmd start|stop|suspend|resume ROUTE`.
pub(crate) async fn cmd(args: CmdArgs) -> ExitCode {
    let client = match Client::new(&args.client) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let Some(route) = args.route.or(args.id) else {
        return fail("name the route: camel cmd ACTION ROUTE");
    };
    let path = format!(
        "/routes/{}/{}",
        camel_api::percent_encode(&route),
        args.action.as_str()
    );
    match client.json(reqwest::Method::POST, &path, &[]).await {
        Ok((_, answer)) => {
            let status = answer["status"].as_str().unwrap_or("?");
            let cut = answer["cut_off"].as_u64().unwrap_or(0);
            if cut > 0 {
                println!("{route}: {status} ({cut} exchanges cut off at the stop deadline)");
            } else {
                println!("{route}: {status}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPE: &str = r#"# TYPE camel_exchanges_total counter
camel_exchanges_total{routeId="a"} 10
camel_exchanges_total{routeId="b \"x\""} 3
camel_exchanges_failed_total{routeId="a"} 1
camel_route_policy_seconds_bucket{routeId="a",failed="false",le="0.001"} 5
camel_route_policy_seconds_bucket{routeId="a",failed="true",le="0.001"} 0
camel_route_policy_seconds_bucket{routeId="a",failed="false",le="0.01"} 9
camel_route_policy_seconds_bucket{routeId="a",failed="true",le="0.01"} 1
camel_route_policy_seconds_bucket{routeId="a",failed="false",le="+Inf"} 9
camel_route_policy_seconds_bucket{routeId="a",failed="true",le="+Inf"} 1
camel_route_policy_seconds_sum{routeId="a",failed="false"} 0.02
camel_route_policy_seconds_count{routeId="a",failed="false"} 9
camel_routes_running 2
"#;

    #[test]
    fn a_scrape_is_read_by_route() {
        let s = Scrape::parse(SCRAPE);
        assert_eq!(s.route_sum("camel_exchanges_total", "a"), Some(10.0));
        assert_eq!(s.route_sum("camel_exchanges_total", "b \"x\""), Some(3.0));
        assert_eq!(s.route_sum("camel_exchanges_failed_total", "b \"x\""), None);
        // 10 observations, 5 under 1 ms, all under 10 ms: p99 is the 10 ms bucket.
        assert_eq!(s.route_p99("a"), Some(0.01));
        assert_eq!(s.route_p99("b \"x\""), None);
        assert!(s
            .samples
            .iter()
            .any(|x| x.name == "camel_routes_running" && x.value == 2.0));
    }

    #[test]
    fn broken_lines_are_passed_over() {
        let s = Scrape::parse("x{a=\"1\" 2\ny{a=1} 3\nz{a=\"1\"} nope\nw 4\n");
        let names: Vec<&str> = s.samples.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["w"]);
    }

    #[test]
    fn ages_and_durations_print_short() {
        assert_eq!(age(Some(45.2)), "45s");
        assert_eq!(age(Some(192.0)), "3m12s");
        assert_eq!(age(Some(7500.0)), "2h5m");
        assert_eq!(age(Some(0.0)), "-");
        assert_eq!(duration(Some(0.0004)), "400µs");
        assert_eq!(duration(Some(0.0123)), "12.3ms");
        assert_eq!(duration(Some(f64::INFINITY)), ">60s");
    }

    #[test]
    fn a_table_keeps_control_characters_off_the_terminal() {
        let t = table(&["A", "B"], &[vec!["x\u{1b}[2J".into(), "y".into()]]);
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(t.starts_with("A      B\n"), "{t}");
    }
}
