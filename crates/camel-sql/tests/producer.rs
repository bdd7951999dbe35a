//! The `sql:` producer against real databases: a SQLite file always, PostgreSQL with
//! `CAMEL_TEST_PG_URL`, MariaDB/MySQL with `CAMEL_TEST_MYSQL_URL`. Named and positional
//! parameters, output types, update counts, batch inserts, typed errors.

mod common;

use camel_api::Exchange;
use camel_sql::headers::{ROW_COUNT, UPDATE_COUNT};
use camel_sql::SqlError;
use common::*;
use serde_json::json;

fn routes(url: &str, t: &str) -> String {
    format!(
        r#"{run}
- route:
    id: insert
    from:
      uri: direct:insert
      steps:
        - to:
            uri: "sql:insert into {t} (id, name, qty) values (:#id, :#name, :#qty)"
            parameters: {{ datasource: "{url}" }}
- route:
    id: batch
    from:
      uri: direct:batch
      steps:
        - to:
            uri: "sql:insert into {t} (id, name, qty) values (:#id, :#name, :#qty)"
            parameters: {{ datasource: "{url}", batch: true }}
- route:
    id: list
    from:
      uri: direct:list
      steps:
        - to: "sql:select id, name, qty from {t} where qty >= :#min order by id?datasource={url}"
- route:
    id: one
    from:
      uri: direct:one
      steps:
        - to:
            uri: "sql:select name from {t} where id = :#id"
            parameters: {{ datasource: "{url}", outputType: SelectOne }}
- route:
    id: one-row
    from:
      uri: direct:one-row
      steps:
        - to:
            uri: "sql:select id, name from {t} where id = :#id"
            parameters: {{ datasource: "{url}", output_type: SelectOne }}
- route:
    id: stream
    from:
      uri: direct:stream
      steps:
        - to:
            uri: "sql:select id from {t} order by id"
            parameters: {{ datasource: "{url}", output_type: StreamList, output_header: ids }}
- route:
    id: positional
    from:
      uri: direct:positional
      steps:
        - to:
            uri: "sql:update {t} set qty = qty + 1 where qty < # and id > #"
            parameters: {{ datasource: "{url}" }}
- route:
    id: expr
    from:
      uri: direct:expr
      steps:
        - to:
            uri: "sql:insert into {t} (id, name, qty) values (:#${{header.id}}, :#${{body[name]}}, 1)"
            parameters: {{ datasource: "{url}" }}
- route:
    id: expr-batch
    from:
      uri: direct:expr-batch
      steps:
        - to:
            uri: "sql:insert into {t} (id, name, qty) values (:#${{body[id]}}, :#${{body[name].toUpperCase()}}, :#${{header.qty}})"
            parameters: {{ datasource: "{url}", batch: true }}
- route:
    id: unknown
    from:
      uri: direct:unknown
      steps:
        - to:
            uri: "sql:select * from {t} where id = :#nope"
            parameters: {{ datasource: "{url}" }}
"#,
        run = run_route(url)
    )
}

async fn exercise(url: &str, name: &str) {
    let t = table(&format!("sql_items_{name}"));
    let ctx = context(&routes(url, &t), |_| {}).await;
    exec(&ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    exec(
        &ctx,
        &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL, qty INTEGER NOT NULL)"),
    )
    .await;

    // Named parameters: the header first, then the body's fields; text "5" into an
    // integer column.
    let ex = Exchange::new(json!({"id": 99, "name": "apple", "qty": "5"})).with_header("id", 1i64);
    let out = ctx.request("direct:insert", ex).await.unwrap();
    assert_eq!(int_header(&out, UPDATE_COUNT), 1);

    let batch = json!([
        {"id": 2, "name": "pear", "qty": 7},
        {"id": 3, "name": "plum", "qty": 0},
    ]);
    let out = ctx
        .request("direct:batch", Exchange::new(batch))
        .await
        .unwrap();
    assert_eq!(int_header(&out, UPDATE_COUNT), 2);

    let out = ctx
        .request("direct:list", Exchange::new("").with_header("min", 1i64))
        .await
        .unwrap();
    assert_eq!(
        body(&out),
        json!([{"id": 1, "name": "apple", "qty": 5}, {"id": 2, "name": "pear", "qty": 7}])
    );
    assert_eq!(int_header(&out, ROW_COUNT), 2);

    let out = ctx
        .request("direct:one", Exchange::new("").with_header("id", "2"))
        .await
        .unwrap();
    assert_eq!(body(&out), json!("pear"));
    let out = ctx
        .request("direct:one-row", Exchange::new(json!({"id": 3})))
        .await
        .unwrap();
    assert_eq!(body(&out), json!({"id": 3, "name": "plum"}));
    let none = ctx
        .request("direct:one", Exchange::new("").with_header("id", 42i64))
        .await
        .unwrap();
    assert!(none.message.body.is_empty());
    assert_eq!(int_header(&none, ROW_COUNT), 0);

    let out = ctx
        .request("direct:stream", Exchange::new("keep"))
        .await
        .unwrap();
    assert_eq!(out.message.body.as_text().unwrap(), "keep");
    assert_eq!(
        out.header("ids").unwrap().to_json(),
        json!([{"id": 1}, {"id": 2}, {"id": 3}])
    );

    // Positional: text split at commas, in order.
    let out = ctx
        .request("direct:positional", Exchange::new("6, 1"))
        .await
        .unwrap();
    assert_eq!(int_header(&out, UPDATE_COUNT), 1, "only id 3 (qty 0)");
    let out = ctx
        .request("direct:one-row", Exchange::new("").with_header("id", 2i64))
        .await
        .unwrap();
    assert_eq!(body(&out), json!({"id": 2, "name": "pear"}));

    // A duplicate key inside a batch: the whole batch is rolled back.
    let batch = json!([{"id": 10, "name": "a", "qty": 1}, {"id": 1, "name": "dup", "qty": 1}]);
    let err = ctx
        .request("direct:batch", Exchange::new(batch))
        .await
        .unwrap_err();
    assert!(
        matches!(sql_error(&err), SqlError::Database { .. }),
        "{err}"
    );
    let out = exec(&ctx, &format!("select count(*) as n from {t}")).await;
    assert_eq!(body(&out), json!([{"n": 3}]));

    // Camel's `:#${…}` expressions; in a batch each entry is the body they see.
    let ex = Exchange::new(json!({"name": "fig"})).with_header("id", 20i64);
    let out = ctx.request("direct:expr", ex).await.unwrap();
    assert_eq!(int_header(&out, UPDATE_COUNT), 1);
    let batch = json!([{"id": 21, "name": "kiwi"}, {"id": 22, "name": "lime"}]);
    let ex = Exchange::new(batch).with_header("qty", 4i64);
    let out = ctx.request("direct:expr-batch", ex).await.unwrap();
    assert_eq!(int_header(&out, UPDATE_COUNT), 2);
    let out = exec(
        &ctx,
        &format!("select id, name, qty from {t} where id >= 20 order by id"),
    )
    .await;
    assert_eq!(
        body(&out),
        json!([
            {"id": 20, "name": "fig", "qty": 1},
            {"id": 21, "name": "KIWI", "qty": 4},
            {"id": 22, "name": "LIME", "qty": 4}
        ])
    );

    let err = ctx
        .request("direct:unknown", Exchange::new(json!({"id": 1})))
        .await
        .unwrap_err();
    match sql_error(&err) {
        SqlError::UnknownParameter { name } => assert_eq!(name, "nope"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(":#nope"), "{err}");

    exec(&ctx, &format!("DROP TABLE {t}")).await;
    ctx.stop().await;
}

test_on!(exercise: sqlite_file, postgres, mysql);

/// A failure to reach the database names it without the password (after the URL's
/// `connect_timeout`: the pool is the outbox's, whose default wait is 30 s).
#[tokio::test]
async fn database_errors_hide_the_password() {
    let url = "postgres://app:s3cret-pw@127.0.0.1:1/shop?connect_timeout=1";
    let ctx = context(&run_route(url), |_| {}).await;
    let err = ctx
        .request("direct:run", Exchange::new(""))
        .await
        .unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(
        matches!(sql_error(&err), SqlError::Database { .. }),
        "{shown}"
    );
    assert!(!shown.contains("s3cret-pw"), "{shown}");
    assert!(shown.contains("postgres://***@127.0.0.1:1/shop"), "{shown}");
    // The context's pool table names the database without the password too.
    let pools = format!("{:?} {:?}", ctx.pools(), ctx.pools().keys());
    assert!(!pools.contains("s3cret-pw"), "{pools}");
    assert!(pools.contains("postgres://***@127.0.0.1:1/shop"), "{pools}");
    let report = ctx.stop().await;
    assert!(!format!("{report:?}").contains("s3cret-pw"));
}

/// A statement the database refuses is a typed error with the database's message.
#[tokio::test]
async fn sql_errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("e.db").display());
    let ctx = context(&run_route(&url), |_| {}).await;
    let ex =
        Exchange::new("").with_header(camel_sql::headers::QUERY, "select * from no_such_table");
    let err = ctx.request("direct:run", ex).await.unwrap_err();
    match sql_error(&err) {
        SqlError::Database { message, .. } => {
            assert!(message.contains("no_such_table"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    ctx.stop().await;
}
