//! Column and parameter types beyond numbers and text: exact decimals, dates and times,
//! uuids, as JSON text; PostgreSQL parameters of such types sent as text and cast.

mod common;

use camel_api::Exchange;
use common::*;
use serde_json::json;

#[tokio::test]
async fn postgres_types() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let ctx = context(&run_route(&url), |_| {}).await;
    let out = exec(
        &ctx,
        "select 12.50::numeric as dec, -0.00001::numeric as tiny, \
         '2024-03-01 10:20:30+00'::timestamptz as ts, '2024-03-01 10:20:30.5'::timestamp as local, \
         '2024-03-01'::date as d, '10:20:30'::time as t, \
         'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid as id, '{\"a\": [1]}'::jsonb as doc, true as yes",
    )
    .await;
    assert_eq!(
        body(&out),
        json!([{
            "dec": "12.50", "tiny": "-0.00001",
            "ts": "2024-03-01T10:20:30Z", "local": "2024-03-01T10:20:30.500",
            "d": "2024-03-01", "t": "10:20:30",
            "id": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "doc": {"a": [1]}, "yes": true
        }])
    );
    // A date parameter from a text header, and a numeric one from a JSON number.
    let ex = Exchange::new(json!({"amount": 2.5}))
        .with_header(
            camel_sql::headers::QUERY,
            "select :#day::date + 1 as next, :#amount::numeric * 2 as twice",
        )
        .with_header("day", "2024-02-28");
    let out = ctx.request("direct:run", ex).await.unwrap();
    assert_eq!(body(&out), json!([{"next": "2024-02-29", "twice": "5.0"}]));
    ctx.stop().await;
}

#[tokio::test]
async fn mysql_types() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MYSQL_URL") else {
        return;
    };
    let ctx = context(&run_route(&url), |_| {}).await;
    let ex = Exchange::new("")
        .with_header(
            camel_sql::headers::QUERY,
            "select CAST(12.50 AS DECIMAL(5,2)) as dec_value, CAST(:#at AS DATETIME) as local_time, \
             CAST('2024-03-01' AS DATE) as d, CAST('10:20:30' AS TIME) as t, 'x' as s",
        )
        .with_header("at", "2024-03-01 10:20:30");
    let out = ctx.request("direct:run", ex).await.unwrap();
    assert_eq!(
        body(&out),
        json!([{
            "dec_value": "12.50", "local_time": "2024-03-01T10:20:30",
            "d": "2024-03-01", "t": "10:20:30", "s": "x"
        }])
    );
    ctx.stop().await;
}
