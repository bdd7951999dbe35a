//! Endpoints the component refuses while the routes load, with a message saying why.

use std::sync::Arc;

use camel_core::CamelContext;
use camel_sql::SqlComponent;

async fn refusal(uri: &str) -> String {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(SqlComponent::new()));
    let yaml = format!(
        "- route:\n    from:\n      uri: direct:a\n      steps:\n        - to: \"{uri}\"\n"
    );
    let defs = camel_core::yaml::load_str(&yaml, "bad.yaml").unwrap();
    let err = ctx.add_routes(defs).await.unwrap_err();
    format!("{err:?}")
}

#[tokio::test]
async fn unknown_options_are_refused_with_the_nearest_name() {
    let e = refusal("sql:select 1?datasource=sqlite::memory:&outputTyp=SelectOne").await;
    // Echoed, with the suggestion, in the spelling the URI used (ADR 0128).
    assert!(
        e.contains("`outputTyp`") && e.contains("`outputType`"),
        "{e}"
    );
}

#[tokio::test]
async fn bad_values_and_statements_are_refused() {
    let e = refusal("sql:select 1?datasource=sqlite::memory:&output_type=SelectMany").await;
    assert!(e.contains("select_list"), "{e}");
    let e = refusal("sql:select :# from t?datasource=sqlite::memory:").await;
    assert!(e.contains("followed by a parameter name"), "{e}");
    let e = refusal("sql:?datasource=sqlite::memory:").await;
    assert!(e.contains("no SQL statement"), "{e}");
    let e = refusal("sql:select 1").await;
    assert!(e.contains("no database"), "{e}");
    let e = refusal("sql:select 1?datasource=nothing_registered").await;
    assert!(
        e.contains("neither a database URL nor a context resource"),
        "{e}"
    );
}

#[tokio::test]
async fn a_password_in_the_uri_is_not_shown_in_a_refusal() {
    let e = refusal("sql:select 1?datasource=postgres://app:s3cret-pw@h/db&bogus=1").await;
    assert!(!e.contains("s3cret-pw"), "{e}");
    assert!(e.contains("bogus"), "{e}");
}
