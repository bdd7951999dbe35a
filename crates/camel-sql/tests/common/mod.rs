//! Helpers shared by the integration tests: a context with the `sql:` component and
//! routes from YAML, and reaching the typed error inside a `CamelError`.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use camel_api::{CamelError, Exchange};
use camel_core::CamelContext;
use camel_sql::{SqlComponent, SqlError};

/// A started context with the `sql` component (and `extra` components) and `yaml` routes.
pub async fn context(yaml: &str, setup: impl FnOnce(&CamelContext)) -> CamelContext {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(SqlComponent::new()));
    setup(&ctx);
    let defs = camel_core::yaml::load_str(yaml, "sql-test.yaml").unwrap();
    ctx.add_routes(defs).await.unwrap();
    ctx.start().await.unwrap();
    ctx
}

/// Runs `sql` (with the values of `headers`) on `url` through a `direct:` route named
/// `direct:run`, which every test context has.
pub fn run_route(url: &str) -> String {
    format!(
        r#"
- route:
    id: run
    from:
      uri: direct:run
      steps:
        - to:
            uri: "sql:select 1"
            parameters: {{ datasource: "{url}" }}
"#
    )
}

/// Runs `statement` through `direct:run` (as `CamelSqlQuery`).
pub async fn exec(ctx: &CamelContext, statement: &str) -> Exchange {
    let ex = Exchange::new("").with_header(camel_sql::headers::QUERY, statement);
    ctx.request("direct:run", ex).await.unwrap()
}

/// The typed error inside `e`.
pub fn sql_error(e: &CamelError) -> &SqlError {
    match e {
        CamelError::External { source, .. } => source
            .downcast_ref::<SqlError>()
            .unwrap_or_else(|| panic!("not a SqlError: {e}")),
        other => panic!("not an external error: {other:?}"),
    }
}

/// A database a test runs on, held for the test's length.
pub struct TestDatabase {
    pub url: String,
    /// Short, for table names.
    pub tag: &'static str,
    /// The folder of a SQLite file, removed when dropped.
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    /// A SQLite file in a new temporary folder.
    pub fn sqlite_file() -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        Some(TestDatabase {
            url: format!("sqlite:{}", dir.path().join("test.db").display()),
            tag: "lite",
            _dir: Some(dir),
        })
    }

    /// PostgreSQL at `CAMEL_TEST_PG_URL`; `None` (the test is skipped) when it is unset.
    pub fn postgres() -> Option<Self> {
        Self::server("CAMEL_TEST_PG_URL", "pg")
    }

    /// MySQL or MariaDB at `CAMEL_TEST_MYSQL_URL`; `None` (skipped) when it is unset.
    pub fn mysql() -> Option<Self> {
        Self::server("CAMEL_TEST_MYSQL_URL", "my")
    }

    fn server(var: &str, tag: &'static str) -> Option<Self> {
        let url = camel_api::test_support::service_from_env(var)?;
        Some(TestDatabase {
            url,
            tag,
            _dir: None,
        })
    }
}

/// One `#[tokio::test]` per database named (`sqlite_file`, `postgres`, `mysql`: the
/// constructors of [`TestDatabase`]), each running `exercise(url, tag)` on it.
#[macro_export]
macro_rules! test_on {
    ($exercise:ident: $($database:ident),+ $(,)?) => {
        $(
            #[tokio::test]
            async fn $database() {
                if let Some(db) = $crate::common::TestDatabase::$database() {
                    $exercise(&db.url, db.tag).await;
                }
            }
        )+
    };
}

/// A table name no other test run uses at the same time.
pub fn table(base: &str) -> String {
    format!("{base}_{}", std::process::id())
}

pub fn body(ex: &Exchange) -> serde_json::Value {
    ex.message.body.to_json().unwrap()
}

pub fn int_header(ex: &Exchange, name: &str) -> i64 {
    ex.header(name)
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("no integer header {name}: {:?}", ex.message.headers))
}
