//! The `sql:` component through the binary: a timer inserts three rows into a SQLite
//! file with a named parameter taken from the timer's header, and the rows are there
//! after the run.

mod support;

use support::*;

#[test]
fn a_timer_route_inserts_rows_into_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ticks.db");
    let url = format!("sqlite:{}", db.display());
    let routes = format!(
        r#"- route:
    id: ticks
    from:
      uri: timer:tick
      parameters: {{ period: 1, delay: 0, repeat_count: 3 }}
      steps:
        - set_body:
            constant: '{{"note": "tick"}}'
        - to:
            uri: "sql:insert into ticks (n, note) values (:#CamelTimerCounter, :#note)"
            parameters: {{ datasource: "{url}" }}
        - log: "inserted ${{header.CamelSqlUpdateCount}}"
"#
    );
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let pool = sqlx::SqlitePool::connect(&format!("{url}?mode=rwc"))
            .await
            .unwrap();
        sqlx::query("CREATE TABLE ticks (n INTEGER NOT NULL, note TEXT NOT NULL)")
            .execute(&pool)
            .await
            .unwrap();
        // Closed while the binary runs: it switches the file to WAL mode, which waits for
        // other connections to go.
        pool.close().await;
    });

    let out = camel(&[
        "run",
        file.to_str().unwrap(),
        "--max-idle-seconds",
        "2",
        "--max-seconds",
        "60",
    ]);
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(log.matches("inserted 1").count(), 3, "{log}");
    assert_eq!(
        rt.block_on(async {
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            sqlx::query_as::<_, (i64, String)>("SELECT n, note FROM ticks ORDER BY n")
                .fetch_all(&pool)
                .await
                .unwrap()
        }),
        vec![
            (1, "tick".to_string()),
            (2, "tick".to_string()),
            (3, "tick".to_string())
        ]
    );
}
