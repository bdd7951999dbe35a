use camel_api::{ComponentContext, Exchange};

use super::*;

/// A context with nothing in it: the xslt component asks for nothing.
struct Nothing;

impl ComponentContext for Nothing {
    fn expression(&self, l: &str, _: &str) -> Result<camel_api::BoxExpression, CamelError> {
        Err(CamelError::processor(format!("no {l}")))
    }
    fn predicate(&self, l: &str, _: &str) -> Result<camel_api::BoxPredicate, CamelError> {
        Err(CamelError::processor(format!("no {l}")))
    }
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no {uri}")))
    }
    fn resource(&self, _: &str) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        None
    }
    fn route_id(&self) -> Option<&str> {
        None
    }
}

const STYLESHEET: &str = r#"<xsl:stylesheet version="3.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/order">
    <summary id="{@id}"><xsl:value-of select="count(item)"/> items</summary>
  </xsl:template>
</xsl:stylesheet>"#;

fn endpoint(dir: &Path, stylesheet: &str, query: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
    let path = dir.join("t.xsl");
    std::fs::write(&path, stylesheet).unwrap();
    let uri = EndpointUri::parse(&format!("xslt:file:{}{query}", path.display()))?;
    XsltComponent.endpoint(uri, &Nothing)
}

#[tokio::test]
async fn transforms_the_body_and_keeps_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let ep = endpoint(dir.path(), STYLESHEET, "").unwrap();
    let ex = Exchange::new(r#"<order id="7"><item/><item/></order>"#).with_header("k", "v");
    let out = ep.producer().unwrap().process(ex).await.unwrap();
    let body = out.message.body.as_text().unwrap().into_owned();
    assert!(
        body.contains(r#"<summary id="7">2 items</summary>"#),
        "{body}"
    );
    assert_eq!(out.header("k").unwrap().to_string(), "v");
}

#[tokio::test]
async fn empty_bodies_and_bad_documents() {
    let dir = tempfile::tempdir().unwrap();
    let ep = endpoint(dir.path(), STYLESHEET, "").unwrap();
    let p = ep.producer().unwrap();
    let err = p
        .process(Exchange::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty"), "{err}");
    let deep = "<a>".repeat(1000) + &"</a>".repeat(1000);
    let err = p
        .process(Exchange::new(deep))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("deeper than"), "{err}");
    let err = p
        .process(Exchange::new("<order>"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not parse"), "{err}");
    let lenient = endpoint(dir.path(), STYLESHEET, "?failOnNullBody=false").unwrap();
    let out = lenient
        .producer()
        .unwrap()
        .process(Exchange::default())
        .await
        .unwrap();
    assert!(out.message.body.is_empty());
}

#[test]
fn load_errors_name_the_stylesheet() {
    let dir = tempfile::tempdir().unwrap();
    let err = endpoint(dir.path(), "<not-a-stylesheet", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("t.xsl"), "{err}");
    let uri = EndpointUri::parse("xslt:file:/no/such.xsl").unwrap();
    let err = XsltComponent
        .endpoint(uri, &Nothing)
        .unwrap_err()
        .to_string();
    assert!(err.contains("such.xsl"), "{err}");
    let uri = EndpointUri::parse("xslt:http://example.com/a.xsl").unwrap();
    assert!(XsltComponent.endpoint(uri, &Nothing).is_err());
    let err = endpoint(dir.path(), STYLESHEET, "?output=DOM")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not supported yet"), "{err}");
}
