//! Scenario `sql`: `sql:` against raw sqlx doing the same work in the same run:
//! single-row inserts with two named parameters, then primary-key selects returning one
//! row. Prints `RESULT` lines with the ratio (`sql:` throughput / raw throughput) and the
//! absolute rates.
//!
//! `cargo run --release -p camel-bench --bin sql` — on a SQLite file in a temporary
//! directory, and on PostgreSQL and MySQL/MariaDB when `CAMEL_TEST_PG_URL` and
//! `CAMEL_TEST_MYSQL_URL` are set.

use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::Exchange;
use camel_bench::result_line;
use camel_core::CamelContext;
use camel_sql::SqlComponent;

const INSERTS: i64 = 1_000;
const SELECTS: i64 = 5_000;
const ROUNDS: i64 = 10;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut urls = vec![format!("sqlite:{}", dir.path().join("bench.db").display())];
    for var in ["CAMEL_TEST_PG_URL", "CAMEL_TEST_MYSQL_URL"] {
        match std::env::var(var) {
            Ok(url) => urls.push(url),
            Err(_) => eprintln!("{var} not set: that database is skipped"),
        }
    }
    for url in urls {
        bench(&url).await?;
    }
    Ok(())
}

async fn bench(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let pg = url.starts_with("postgres");
    let t = format!("sql_bench_{}", std::process::id());
    let yaml = format!(
        r#"
- route:
    id: ddl
    from:
      uri: direct:ddl
      steps:
        - to: {{ uri: "sql:select 1", parameters: {{ datasource: "{url}" }} }}
- route:
    id: insert
    from:
      uri: direct:insert
      steps:
        - to: {{ uri: "sql:insert into {t} (id, name) values (:#id, :#name)", parameters: {{ datasource: "{url}" }} }}
- route:
    id: select
    from:
      uri: direct:select
      steps:
        - to: {{ uri: "sql:select id, name from {t} where id = :#id", parameters: {{ datasource: "{url}" }} }}
"#
    );
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(SqlComponent::new()));
    ctx.add_routes(camel_core::yaml::load_str(&yaml, "bench.yaml")?)
        .await?;
    ctx.start().await?;
    let ddl = |sql: String| Exchange::new("").with_header(camel_sql::headers::QUERY, sql);
    ctx.request("direct:ddl", ddl(format!("DROP TABLE IF EXISTS {t}")))
        .await?;
    ctx.request(
        "direct:ddl",
        ddl(format!(
            "CREATE TABLE {t} (id BIGINT PRIMARY KEY, name TEXT NOT NULL)"
        )),
    )
    .await?;

    // The baseline: its own pool, the same statements with the database's placeholders.
    let (ins, sel) = if pg { ("$1, $2", "$1") } else { ("?, ?", "?") };
    let insert_sql = format!("insert into {t} (id, name) values ({ins})");
    let select_sql = format!("select id, name from {t} where id = {sel}");
    let any = Raw::connect(url).await?;

    // Interleaved rounds, so neither side gets the warmer cache or the longer WAL.
    let (mut sql_time, mut raw_time) = (Duration::ZERO, Duration::ZERO);
    let per_round = INSERTS / ROUNDS;
    for round in 0..ROUNDS {
        let base = round * per_round;
        let started = Instant::now();
        for id in base..base + per_round {
            let ex = Exchange::new("")
                .with_header("id", id)
                .with_header("name", "n");
            ctx.request("direct:insert", ex).await?;
        }
        sql_time += started.elapsed();
        let started = Instant::now();
        for id in INSERTS + base..INSERTS + base + per_round {
            any.insert(&insert_sql, id).await?;
        }
        raw_time += started.elapsed();
    }
    let sql_insert = INSERTS as f64 / sql_time.as_secs_f64();
    let raw_insert = INSERTS as f64 / raw_time.as_secs_f64();

    let (mut sql_time, mut raw_time) = (Duration::ZERO, Duration::ZERO);
    let per_round = SELECTS / ROUNDS;
    for round in 0..ROUNDS {
        let base = round * per_round;
        let started = Instant::now();
        for i in base..base + per_round {
            let ex = Exchange::new("").with_header("id", i % (2 * INSERTS));
            let out = ctx.request("direct:select", ex).await?;
            assert!(!out.message.body.is_empty());
        }
        sql_time += started.elapsed();
        let started = Instant::now();
        for i in base..base + per_round {
            let row = any.select(&select_sql, i % (2 * INSERTS)).await?;
            assert!(!row.is_null());
        }
        raw_time += started.elapsed();
    }
    let sql_select = SELECTS as f64 / sql_time.as_secs_f64();
    let raw_select = SELECTS as f64 / raw_time.as_secs_f64();

    ctx.request("direct:ddl", ddl(format!("DROP TABLE {t}")))
        .await?;
    ctx.stop().await;
    let db = match any {
        Raw::Pg(_) => "postgres",
        Raw::My(_) => "mysql",
        Raw::Lite(_) => "sqlite",
    };
    for (case, ours, raw) in [
        ("sql_insert", sql_insert, raw_insert),
        ("sql_select", sql_select, raw_select),
    ] {
        result_line(
            case,
            &[
                ("db", db.to_string()),
                ("ratio", format!("{:.2}", ours / raw)),
                ("sql_per_s", format!("{ours:.0}")),
                ("raw_per_s", format!("{raw:.0}")),
            ],
        );
    }
    Ok(())
}

/// Raw sqlx, building the same JSON row the component does.
enum Raw {
    Pg(sqlx::PgPool),
    My(sqlx::MySqlPool),
    Lite(sqlx::SqlitePool),
}

impl Raw {
    async fn connect(url: &str) -> Result<Raw, sqlx::Error> {
        Ok(if url.starts_with("postgres") {
            Raw::Pg(
                sqlx::postgres::PgPoolOptions::new()
                    .max_connections(8)
                    .connect(url)
                    .await?,
            )
        } else if url.starts_with("mysql") || url.starts_with("mariadb") {
            let url = url.replacen("mariadb://", "mysql://", 1);
            Raw::My(
                sqlx::mysql::MySqlPoolOptions::new()
                    .max_connections(8)
                    .connect(&url)
                    .await?,
            )
        } else {
            let options: sqlx::sqlite::SqliteConnectOptions = url.parse()?;
            // The settings the context's shared SQLite pool uses (WAL, synchronous=NORMAL):
            // otherwise the insert case compares fsync policies, not code paths.
            let options = options
                .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sqlx::sqlite::SqliteSynchronous::Normal);
            Raw::Lite(
                sqlx::sqlite::SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(options)
                    .await?,
            )
        })
    }

    async fn insert(&self, sql: &str, id: i64) -> Result<(), sqlx::Error> {
        match self {
            Raw::Pg(p) => sqlx::query(sql)
                .bind(id)
                .bind("n")
                .execute(p)
                .await
                .map(drop),
            Raw::My(p) => sqlx::query(sql)
                .bind(id)
                .bind("n")
                .execute(p)
                .await
                .map(drop),
            Raw::Lite(p) => sqlx::query(sql)
                .bind(id)
                .bind("n")
                .execute(p)
                .await
                .map(drop),
        }
    }

    async fn select(&self, sql: &str, id: i64) -> Result<serde_json::Value, sqlx::Error> {
        let (id, name): (i64, String) = match self {
            Raw::Pg(p) => sqlx::query_as(sql).bind(id).fetch_one(p).await?,
            Raw::My(p) => sqlx::query_as(sql).bind(id).fetch_one(p).await?,
            Raw::Lite(p) => sqlx::query_as(sql).bind(id).fetch_one(p).await?,
        };
        Ok(serde_json::json!([{ "id": id, "name": name }]))
    }
}
