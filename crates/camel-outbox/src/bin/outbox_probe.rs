//! A relay process for the two-process test (`tests/two_processes.rs`): drains outbox
//! NAME on PostgreSQL and records every delivery (process, partition, id, start, end) in
//! the table `<outbox table>_log`, and prints `D <partition> <id>` per delivery.
//!
//! Usage: `outbox-probe POSTGRES_URL OUTBOX_NAME PARTITIONS LABEL`

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_outbox::{Datasource, Outbox, OutboxConfig, Relay};

fn micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, name, partitions, label] = args.as_slice() else {
        return Err("usage: outbox-probe POSTGRES_URL OUTBOX_NAME PARTITIONS LABEL".into());
    };
    let ds = Datasource::connect(url)?;
    let Datasource::Postgres(pool) = ds.clone() else {
        return Err("the probe needs PostgreSQL".into());
    };
    let mut config = OutboxConfig::new(name);
    config.partitions = partitions.parse()?;
    config.poll_interval = Duration::from_millis(20);
    config.takeover_interval = Duration::from_millis(100);
    config.sweep_interval = Duration::from_millis(200);
    let outbox = Outbox::open(ds, config).await?;
    let log_table = format!("{}_log", outbox.table());
    let label = label.clone();
    let relay = Relay::new(outbox, move |m| {
        let (pool, log_table, label) = (pool.clone(), log_table.clone(), label.clone());
        async move {
            let started = micros();
            // A little work, so deliveries of two owners would visibly overlap.
            tokio::time::sleep(Duration::from_millis(1)).await;
            let ended = micros();
            sqlx::query(&format!(
                "INSERT INTO {log_table} (process, partition_no, id, group_key, started_us, ended_us)
                 VALUES ($1, $2, $3, $4, $5, $6)"
            ))
            .bind(&label)
            .bind(m.partition as i32)
            .bind(m.id)
            .bind(&m.group_key)
            .bind(started)
            .bind(ended)
            .execute(&pool)
            .await
            .map_err(|e| camel_api::CamelError::external("probe log", e))?;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "D {} {}", m.partition, m.id);
            let _ = out.flush();
            Ok(())
        }
    });
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    relay.run(cancel).await?;
    Ok(())
}
