//! Instantiating a route template from Rust with typed parameters.

use serde_json::{Map, Value as Json};

use super::loader::load_texts_partial_with;
use crate::error::{RouteError, RouteErrorKind, RouteErrors};
use crate::model::RouteDefinition;
use crate::properties::Properties;

/// Instantiates the route template `template_id` written in `texts` (`(text, file name)`)
/// with `parameters`, any `Serialize` value that is a map (a struct of typed fields), as
/// a `templatedRoute` would: the parameters are bound, checked against the template's
/// declarations and defaults, and substituted before `properties`. Returns the route
/// (and the routes of the Kamelets it uses); other routes of `texts` are left out.
///
/// ```
/// use camel_core::properties::Properties;
///
/// #[derive(serde::Serialize)]
/// struct Greeter<'a> {
///     name: &'a str,
///     greeting: &'a str,
/// }
///
/// let template = "
/// - routeTemplate:
///     id: greeter
///     parameters:
///       - name: name
///       - name: greeting
///         defaultValue: Hello
///     from:
///       uri: direct:{{name}}
///       steps:
///         - setBody: {simple: '{{greeting}} ${body}'}
/// ";
/// let routes = camel_core::yaml::instantiate_template(
///     &[(template, "templates.yaml")],
///     "greeter",
///     "french",
///     &Greeter { name: "fr", greeting: "Bonjour" },
///     &Properties::new(),
/// )
/// .unwrap();
/// assert_eq!(routes[0].id.as_deref(), Some("french"));
/// assert_eq!(routes[0].from.uri, "direct:fr");
/// ```
pub fn instantiate_template(
    texts: &[(&str, &str)],
    template_id: &str,
    route_id: &str,
    parameters: &impl serde::Serialize,
    properties: &Properties,
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    let given = match serde_json::to_value(parameters) {
        // An absent optional field (`None`) leaves its parameter to the default.
        Ok(Json::Object(mut map)) => {
            map.retain(|_, v| !v.is_null());
            map
        }
        Ok(Json::Null) => Map::new(),
        Ok(_) | Err(_) => {
            return Err(RouteErrors(vec![RouteError::new(
                RouteErrorKind::InvalidValue(format!(
                    "the parameters of route template `{template_id}` must serialize as a map \
                     of names to values"
                )),
            )]))
        }
    };
    let mut templated = Map::new();
    templated.insert("routeTemplateRef".into(), Json::String(template_id.into()));
    templated.insert("routeId".into(), Json::String(route_id.into()));
    templated.insert("parameters".into(), Json::Object(given));
    let mut item = Map::new();
    item.insert("templatedRoute".into(), Json::Object(templated));
    // JSON is YAML: the use is read as a file of its own.
    let use_text = Json::Array(vec![Json::Object(item)]).to_string();
    let mut all: Vec<(&str, &str)> = texts.to_vec();
    all.push((&use_text, "<instantiate_template>"));
    let (routes, errors) = load_texts_partial_with(&all, properties);
    if !errors.is_empty() {
        return Err(RouteErrors(errors));
    }
    // The instance and the Kamelet copies made for it: what the texts alone do not make.
    let (alone, _) = load_texts_partial_with(texts, properties);
    let before: Vec<(Option<String>, String)> = alone
        .iter()
        .map(|r| (r.id.clone(), r.from.uri.clone()))
        .collect();
    Ok(routes
        .into_iter()
        .filter(|r| {
            r.id.as_deref() == Some(route_id)
                || !before.contains(&(r.id.clone(), r.from.uri.clone()))
        })
        .collect())
}
