use super::*;

#[test]
fn resolves_every_spelling() {
    assert_eq!(parse("body", 0), Ok(Function::Body));
    assert_eq!(parse(" in.body ", 0), Ok(Function::Body));
    for s in [
        "header.x",
        "headers.x",
        "in.header.x",
        "in.headers.x",
        "header[x]",
        "header['x']",
    ] {
        assert_eq!(parse(s, 0), Ok(Function::Header("x".into())), "{s}");
    }
    assert_eq!(
        parse("exchangeProperty.p", 0),
        Ok(Function::Property("p".into()))
    );
    assert_eq!(
        parse("exchangeProperty[p]", 0),
        Ok(Function::Property("p".into()))
    );
    assert_eq!(parse("exchangeId", 0), Ok(Function::ExchangeId));
    assert_eq!(
        parse("bodyAs(String)", 0),
        Ok(Function::BodyAs(Conversion::Text, Mandatory::No))
    );
    assert_eq!(
        parse("bodyAs(java.lang.Integer)", 0),
        Ok(Function::BodyAs(Conversion::Integer, Mandatory::No))
    );
}

#[test]
fn header_names_may_contain_dots() {
    assert_eq!(parse("header.a.b", 0), Ok(Function::Header("a.b".into())));
}

#[test]
fn unknown_function_points_at_its_name_and_suggests() {
    let p = parse("  bdy", 2).unwrap_err();
    assert_eq!(p.at, 4);
    assert!(p.message.contains("did you mean `body`"), "{}", p.message);
}

#[test]
fn other_spellings_get_a_suggestion() {
    let p = parse("header:x", 0).unwrap_err();
    assert!(p.message.contains("did you mean `header`"), "{}", p.message);
}

#[test]
fn missing_names_are_errors() {
    assert!(parse("header.", 0)
        .unwrap_err()
        .message
        .contains("missing header name"));
    assert!(parse("header", 0)
        .unwrap_err()
        .message
        .contains("missing header name"));
    assert!(parse("header[x", 0).unwrap_err().message.contains("`]`"));
    assert!(parse("exchangeProperty[]", 0).is_err());
    assert!(parse("bodyAs(Foo)", 0)
        .unwrap_err()
        .message
        .contains("unknown type"));
    assert!(parse("", 3).is_err());
}

#[test]
fn evaluates_against_an_exchange() {
    let mut ex = Exchange::new("42").with_header("h", 7);
    ex.properties.insert("p", "v");
    let value = |f: Function| f.value(&ex).unwrap().into_owned();
    assert_eq!(value(Function::Body), Value::from("42"));
    assert_eq!(value(Function::Header("h".into())), Value::Int(7));
    assert_eq!(value(Function::Header("missing".into())), Value::Null);
    assert_eq!(value(Function::Property("p".into())), Value::from("v"));
    assert_eq!(
        value(Function::BodyAs(Conversion::Integer, Mandatory::No)),
        Value::Int(42)
    );
    assert_eq!(
        value(Function::BodyAs(Conversion::Decimal, Mandatory::No)),
        Value::Float(42.0)
    );
    assert_eq!(value(Function::ExchangeId), Value::from(ex.id.to_string()));
    let bad = Exchange::new("x");
    assert!(Function::BodyAs(Conversion::Boolean, Mandatory::No)
        .value(&bad)
        .is_err());
}

#[test]
fn appends_text_forms() {
    let ex = Exchange::new("b").with_header("n", 3);
    let mut out = String::new();
    Function::Body.append_to(&ex, &mut out).unwrap();
    Function::Header("n".into())
        .append_to(&ex, &mut out)
        .unwrap();
    Function::Header("none".into())
        .append_to(&ex, &mut out)
        .unwrap();
    assert_eq!(out, "b3");
}
