use std::path::Path;
use std::sync::Arc;

use camel_api::suggest::{nearest, to_snake_case};
use serde_json::{Map, Value as Json};

use super::configuration::{ContextErrors, ContextPart, ContextSet};
use super::node;
use crate::error::{Location, RouteError, RouteErrorKind, RouteErrors};
use crate::model::{camel_dsl, BeanDefinition, Positions, RouteDefinition, SourceMap};
use crate::properties::Properties;

/// Loads the routes of a YAML file.
pub fn load_file(path: impl AsRef<Path>) -> Result<Vec<RouteDefinition>, RouteErrors> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| read_error(path, e))?;
    load_str(&text, &path.display().to_string())
}

/// Loads the routes in `text`; `file` names the source in error messages. Every document
/// of the file (`---`) is read, and every error of every route and item is reported.
pub fn load_str(text: &str, file: &str) -> Result<Vec<RouteDefinition>, RouteErrors> {
    whole(load_str_partial(text, file))
}

/// Like [`load_file`], but also returns the routes that loaded when others did not, so
/// that `camel validate` can compile them and report their errors in the same run.
pub fn load_file_partial(path: impl AsRef<Path>) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    let path = path.as_ref();
    match std::fs::read_to_string(path) {
        Ok(text) => load_str_partial(&text, &path.display().to_string()),
        Err(e) => (Vec::new(), vec![read_error(path, e)]),
    }
}

/// Like [`load_str`], returning the routes that loaded beside every error, including
/// routes whose source and steps were read whole although one of their options (or a key
/// beside them) was wrong: compile them to find more errors, never run them.
pub fn load_str_partial(text: &str, file: &str) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    load_str_partial_with(text, file, &Properties::new())
}

/// Like [`load_file`], resolving property placeholders with `properties`.
pub fn load_file_with(
    path: impl AsRef<Path>,
    properties: &Properties,
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    whole(load_file_partial_with(path, properties))
}

/// Like [`load_str`], resolving property placeholders with `properties`.
pub fn load_str_with(
    text: &str,
    file: &str,
    properties: &Properties,
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    whole(load_str_partial_with(text, file, properties))
}

/// Like [`load_file_partial`], resolving property placeholders with `properties`.
pub fn load_file_partial_with(
    path: impl AsRef<Path>,
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    let path = path.as_ref();
    match std::fs::read_to_string(path) {
        Ok(text) => load_str_partial_with(&text, &path.display().to_string(), properties),
        Err(e) => (Vec::new(), vec![read_error(path, e)]),
    }
}

/// Like [`load_str_partial`], resolving property placeholders with `properties`: every
/// string value of the file is resolved before the routes are read, so a resolved value
/// is checked like one written out, and an unresolvable placeholder is an error at the
/// value that holds it.
pub fn load_str_partial_with(
    text: &str,
    file: &str,
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    load_texts_partial_with(&[(text, file)], properties)
}

/// Loads several route texts (`(text, file name)`) as the routes of one context: the
/// top-level `errorHandler`, `onException`, `onCompletion`, `routeConfiguration` and
/// interceptors of any of them apply to the routes of all of them, as in Camel, where
/// they are context-wide. A route may name a `routeConfigurationId` written in another
/// text; two top-level `errorHandler`s are an error.
///
/// ```
/// use camel_core::properties::Properties;
/// let shared = "- errorHandler: {deadLetterChannel: {deadLetterUri: 'log:dead'}}";
/// let orders = "- route: {id: orders, from: {uri: 'direct:a', steps: [{to: 'log:x'}]}}";
/// let routes = camel_core::yaml::load_texts_with(
///     &[(shared, "shared.yaml"), (orders, "orders.yaml")],
///     &Properties::new(),
/// )
/// .unwrap();
/// assert!(routes[0].errors.context_error_handler.is_some());
/// ```
pub fn load_texts_with(
    texts: &[(&str, &str)],
    properties: &Properties,
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    whole(load_texts_partial_with(texts, properties))
}

/// Like [`load_texts_with`], returning the routes that loaded beside every error (see
/// [`load_str_partial`]).
pub fn load_texts_partial_with(
    texts: &[(&str, &str)],
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    load_with_kamelets(texts, &[], properties)
}

/// Like [`load_texts_partial_with`], with Kamelet definitions from `kamelets` (`(text,
/// file name)`, e.g. the files of a `--kamelets` folder, in rising precedence): only their
/// `kind: Kamelet` documents are read, and a broken one is dropped (its use then says no
/// Kamelet has the name). The Kamelets built in take precedence over them, and Kamelets in
/// `texts` over both.
pub fn load_with_kamelets(
    texts: &[(&str, &str)],
    kamelets: &[(&str, &str)],
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    let mut errors = Vec::new();
    // Folders first, then the built-in Kamelets over them: a catalog checkout adds the
    // Kamelets camel-rs lacks, while a name camel-rs has keeps the one written for its
    // components (ADR 0116). Files beside or named replace either.
    let mut library = super::templates::Library::default();
    for (text, file) in kamelets {
        let file: Arc<str> = (*file).into();
        if let Ok(docs) = node::parse_all(text, &file) {
            for doc in docs {
                collect_kamelet(doc, &file, &mut library, None);
            }
        }
    }
    library.kamelets.extend(super::builtin::library().kamelets);
    // Every text parsed first, so a template may be used before (or away from) its
    // definition.
    let mut parsed = Vec::new();
    for (text, file) in texts {
        let file: Arc<str> = (*file).into();
        match node::parse_all(text, &file) {
            Ok(docs) => {
                let docs: Vec<(Json, PositionIndex)> = docs
                    .into_iter()
                    .map(|d| (d.value, Arc::new(d.positions)))
                    .collect();
                parsed.push((file, docs));
            }
            Err(e) => errors.push(RouteError::new(RouteErrorKind::Syntax(e.message)).at(Some(
                Location {
                    file,
                    line: e.line,
                    column: e.column,
                },
            ))),
        }
    }
    for (file, docs) in &mut parsed {
        for (value, positions) in docs.iter_mut() {
            collect_templates(value, file, positions, &mut library, &mut errors);
        }
    }
    let mut properties = properties.clone();
    for (_, docs) in &parsed {
        for (value, _) in docs {
            super::camel_k::resource_properties(value, &mut properties);
        }
    }
    let load = super::expand::Load::new(library, &properties);
    let mut set = ContextSet::default();
    let mut routes = Vec::new();
    let mut orphans: Vec<OrphanBean> = Vec::new();
    for (file, docs) in parsed {
        let (r, e, o) = read_docs(file, docs, &load, &mut set);
        routes.extend(r);
        errors.extend(e);
        orphans.extend(o);
    }
    // The beans of a file without routes (Camel JBang's `beans.yaml` beside the routes)
    // serve every route of the load; with no route at all, say why nothing is built.
    if routes.is_empty() {
        errors.extend(orphans.into_iter().flat_map(|(_, e)| e));
    } else {
        let shared: Vec<BeanDefinition> = orphans.into_iter().map(|(b, _)| b).collect();
        for route in &mut routes {
            let own = std::mem::take(&mut route.beans);
            route.beans.clone_from(&shared);
            route.beans.extend(own);
        }
    }
    errors.extend(set.apply(&mut routes));
    crate::error::drop_shadowed(&mut errors);
    (routes, errors)
}

/// Takes a `kind: Kamelet` document into `library` (replacing one of the same name),
/// leaving `null` in its place; its errors go to `errors`, or are dropped when `None`
/// (a library folder: only a Kamelet that is used matters).
fn collect_kamelet(
    doc: node::Spanned,
    file: &Arc<str>,
    library: &mut super::templates::Library,
    errors: Option<&mut Vec<RouteError>>,
) {
    let Json::Object(map) = &doc.value else {
        return;
    };
    if map.get("kind").and_then(Json::as_str) != Some("Kamelet") {
        return;
    }
    let positions = Arc::new(doc.positions);
    let reader = super::templates::DefinitionReader {
        file,
        positions: &positions,
    };
    match reader.kamelet(map) {
        Ok(template) => {
            library.kamelets.insert(template.name.clone(), template);
        }
        Err(e) => {
            if let Some(errors) = errors {
                errors.extend(e);
            }
        }
    }
}

/// Takes the Kamelets and `routeTemplate` items of a route file's document into
/// `library`. A Kamelet document becomes `null`; a `routeTemplate` item keeps its key
/// with a `null` value, so the items after it keep their positions.
fn collect_templates(
    value: &mut Json,
    file: &Arc<str>,
    positions: &PositionIndex,
    library: &mut super::templates::Library,
    errors: &mut Vec<RouteError>,
) {
    let reader = super::templates::DefinitionReader { file, positions };
    match value {
        Json::Object(map) if map.get("kind").and_then(Json::as_str) == Some("Kamelet") => {
            match reader.kamelet(map) {
                Ok(template) => {
                    library.kamelets.insert(template.name.clone(), template);
                }
                Err(e) => errors.extend(e),
            }
            *value = Json::Null;
        }
        Json::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let Json::Object(map) = item else { continue };
                let Some(key) = map
                    .keys()
                    .find(|k| to_snake_case(k) == "route_template")
                    .cloned()
                else {
                    continue;
                };
                let body = map.insert(key.clone(), Json::Null).unwrap_or(Json::Null);
                match reader.route_template(&body, &format!("/{i}/{key}")) {
                    Ok(template) => {
                        if let Some(first) = library.route_templates.get(&template.name) {
                            if first.file != template.file || first.pointer != template.pointer {
                                errors.push(
                                    RouteError::new(RouteErrorKind::InvalidValue(format!(
                                        "route template `{}` is defined twice{}",
                                        template.name,
                                        first
                                            .location
                                            .as_ref()
                                            .map(|l| format!(" (first at {l})"))
                                            .unwrap_or_default()
                                    )))
                                    .at(template.location.clone()),
                                );
                                continue;
                            }
                        }
                        library
                            .route_templates
                            .insert(template.name.clone(), template);
                    }
                    Err(e) => errors.extend(e),
                }
            }
        }
        _ => {}
    }
}

/// Loads several route files as the routes of one context (see [`load_texts_with`]),
/// resolving property placeholders with `properties`. What `camel run` does.
pub fn load_files_with(
    paths: &[impl AsRef<Path>],
    properties: &Properties,
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    whole(load_files_partial_with(paths, properties))
}

/// Like [`load_files_with`], returning the routes that loaded beside every error (see
/// [`load_str_partial`]). What `camel validate` does.
pub fn load_files_partial_with(
    paths: &[impl AsRef<Path>],
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    load_files_with_kamelets(paths, &[], properties)
}

/// Like [`load_files_partial_with`], with Kamelet definitions from `kamelets` (`(text, file
/// name)`, lowest precedence first; see [`load_with_kamelets`]).
pub fn load_files_with_kamelets(
    paths: &[impl AsRef<Path>],
    kamelets: &[(String, String)],
    properties: &Properties,
) -> (Vec<RouteDefinition>, Vec<RouteError>) {
    let mut texts = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let path = path.as_ref();
        match std::fs::read_to_string(path) {
            Ok(text) => texts.push((text, path.display().to_string())),
            Err(e) => errors.push(read_error(path, e)),
        }
    }
    let texts: Vec<(&str, &str)> = texts
        .iter()
        .map(|(t, f)| (t.as_str(), f.as_str()))
        .collect();
    let kamelets: Vec<(&str, &str)> = kamelets
        .iter()
        .map(|(t, f)| (t.as_str(), f.as_str()))
        .collect();
    let (routes, more) = load_with_kamelets(&texts, &kamelets, properties);
    errors.extend(more);
    (routes, errors)
}

fn read_error(path: &Path, e: std::io::Error) -> RouteError {
    RouteError::new(RouteErrorKind::Read(Arc::new(e))).at(Some(Location {
        file: path.display().to_string().into(),
        line: 0,
        column: 0,
    }))
}

/// Reads the documents of one text: its routes and errors, its context-level items added
/// to `set` (applied by the caller once every text is read).
fn read_docs(
    file: Arc<str>,
    docs: Vec<(Json, PositionIndex)>,
    load: &std::rc::Rc<super::expand::Load>,
    set: &mut ContextSet,
) -> (Vec<RouteDefinition>, Vec<RouteError>, Vec<OrphanBean>) {
    let mut routes = Vec::new();
    let mut errors = Vec::new();
    let mut beans = Vec::new();
    for (mut value, positions) in docs {
        let reader = Reader::new(file.clone(), positions, load.clone());
        let mut unresolved = Vec::new();
        super::placeholders::resolve(
            &mut value,
            String::new(),
            &load.properties,
            &mut load.budget.borrow_mut(),
            &mut unresolved,
        );
        // A placeholder that cannot be resolved is an error at its value; the document is
        // still read (its routes kept for `camel validate` only), so its other errors are
        // reported too, except those at the placeholder's own place (`drop_shadowed`).
        let spent = unresolved
            .iter()
            .any(|(e, _)| matches!(e, crate::properties::PropertyError::TotalTooLarge { .. }));
        let mut found: Vec<RouteError> = unresolved
            .into_iter()
            .map(|(e, pointer)| reader.error(RouteErrorKind::Property(e), &pointer))
            .collect();
        // In the file's order, not the order of the map's keys.
        found.sort_by_key(|e| e.location.as_ref().map(|l| (l.line, l.column)));
        let unresolved = !found.is_empty();
        errors.extend(found);
        if spent {
            continue;
        }
        let mut read = Vec::new();
        let uses = reader.find_uses(&mut value, &mut errors);
        let (r, e) = reader.document(value);
        read.extend(r);
        errors.extend(e);
        let (r, e) = reader.instantiate_uses(uses);
        // The Kamelet copies that routes send to (sinks, actions) go first, so that they
        // start before their senders and stop after them: a timer source stopped last
        // would still fire into a sink already stopped.
        let (fed, feeding): (Vec<_>, Vec<_>) = r
            .into_iter()
            .partition(|route| route.from.uri.starts_with("direct:camel.kamelet."));
        read.splice(0..0, fed);
        read.extend(feeding);
        errors.extend(e);
        read.extend(reader.instances.take());
        if unresolved {
            reader.partial.borrow_mut().extend(read);
        } else {
            routes.extend(read);
        }
        routes.extend(reader.partial.into_inner());
        beans.extend(reader.beans.into_inner());
        let source = Positions {
            file: reader.file.clone(),
            positions: reader.positions.clone(),
        };
        set.parts.extend(
            reader
                .context
                .into_inner()
                .into_iter()
                .map(|errors| ContextPart {
                    source: source.clone(),
                    errors,
                }),
        );
    }
    // The file's beans are built when its routes are added (ADR 0076): a file with beans
    // and no route gives them to the routes of the other files, and when there are none
    // the caller says so rather than drop them.
    if !beans.is_empty() && routes.is_empty() && errors.is_empty() {
        let at = beans
            .first()
            .and_then(|b: &BeanDefinition| b.location.clone());
        let why = RouteError::new(RouteErrorKind::InvalidValue(
            "this file declares `beans` but the files loaded with it hold no route: \
             camel-rs builds beans with the routes that call them"
                .into(),
        ))
        .at(at);
        let mut orphans: Vec<OrphanBean> = beans.into_iter().map(|b| (b, Vec::new())).collect();
        if let Some(first) = orphans.first_mut() {
            first.1.push(why);
        }
        return (routes, errors, orphans);
    }
    for route in &mut routes {
        // A Kamelet's copy keeps the beans of its template (ADR 0119) after the file's.
        let own = std::mem::take(&mut route.beans);
        route.beans.clone_from(&beans);
        route.beans.extend(own);
    }
    (routes, errors, Vec::new())
}

/// A bean of a file without routes, and the error to report if no file of the load has
/// a route it could serve.
type OrphanBean = (BeanDefinition, Vec<RouteError>);

/// Where each node of a document was written, by JSON pointer.
pub(super) type PositionIndex = Arc<std::collections::HashMap<String, (usize, usize)>>;

/// What was read from one part of a file, or every error found in it.
pub(super) type Read<T> = Result<T, Vec<RouteError>>;

/// The routes that loaded and the errors of those that did not.
pub(super) type Loaded = (Vec<RouteDefinition>, Vec<RouteError>);

pub(super) struct Reader {
    file: Arc<str>,
    positions: Arc<std::collections::HashMap<String, (usize, usize)>>,
    /// Routes whose whole body was read although an error was found beside it (a bad
    /// route option, a key beside `from`): compiled by `camel validate` only.
    partial: std::cell::RefCell<Vec<RouteDefinition>>,
    /// The file's top-level `beans:` entries.
    beans: std::cell::RefCell<Vec<BeanDefinition>>,
    /// The `rest:` items of the list being read, expanded once it is read whole.
    pub(super) rest_items: std::cell::RefCell<super::rest::RestItems>,
    /// The context-level items of each list read, for [`ContextSet::apply`].
    context: std::cell::RefCell<Vec<ContextErrors>>,
    /// The load this reader is part of: its templates and properties.
    pub(super) load: std::rc::Rc<super::expand::Load>,
    /// Routes made from templates while reading (`templatedRoute` items).
    pub(super) instances: std::cell::RefCell<Vec<RouteDefinition>>,
}

impl Reader {
    fn new(
        file: Arc<str>,
        positions: Arc<std::collections::HashMap<String, (usize, usize)>>,
        load: std::rc::Rc<super::expand::Load>,
    ) -> Reader {
        Reader {
            file,
            positions,
            partial: Default::default(),
            beans: Default::default(),
            rest_items: Default::default(),
            context: Default::default(),
            load,
            instances: Default::default(),
        }
    }

    /// A reader of the file a template was written in, in the same load.
    pub(super) fn for_template(&self, template: &super::templates::Template) -> Reader {
        Reader::new(
            template.file.clone(),
            template.positions.clone(),
            self.load.clone(),
        )
    }

    /// The name of the file being read.
    pub(super) fn file(&self) -> &str {
        &self.file
    }

    pub(super) fn has_position(&self, pointer: &str) -> bool {
        self.positions.contains_key(pointer)
    }

    pub(super) fn locate_pointer(&self, pointer: &str) -> Option<Location> {
        self.locate(pointer)
    }

    pub(super) fn keep_partial(&self, route: RouteDefinition) {
        self.partial.borrow_mut().push(route);
    }

    pub(super) fn locate(&self, pointer: &str) -> Option<Location> {
        SourceMap {
            file: self.file.clone(),
            positions: self.positions.clone(),
            ..Default::default()
        }
        .locate(pointer)
    }

    pub(super) fn error(&self, kind: RouteErrorKind, pointer: &str) -> RouteError {
        // An unknown key's suggestions in the file's spelling.
        let kind = match kind {
            k @ RouteErrorKind::UnknownKey { .. } => {
                k.spelt(crate::model::file_spelling(&self.positions))
            }
            other => other,
        };
        RouteError::new(kind).at(self.locate(pointer))
    }

    pub(super) fn unknown_key(&self, key: &str, expected: &[&str], pointer: &str) -> RouteError {
        self.error(
            RouteErrorKind::UnknownKey {
                key: key.to_string(),
                suggestion: nearest(key, expected.iter().copied()).map(str::to_string),
                expected: expected.iter().map(|s| s.to_string()).collect(),
            },
            &format!("{pointer}/{key}"),
        )
    }

    /// A document: a list of items, or a Camel K resource (`kind: Integration`, `Pipe`).
    fn document(&self, value: Json) -> Loaded {
        match value {
            Json::Array(items) => self.items(items, ""),
            Json::Null => (Vec::new(), Vec::new()),
            // A JBang script line (`///usr/bin/env jbang … "$0" "$@" ; exit $?`) ahead of
            // a `---`: YAML reads it as a document of its own, Camel JBang as a script
            // header.
            Json::String(line) if line.starts_with("///") && line.contains("jbang") => {
                (Vec::new(), Vec::new())
            }
            Json::Object(map) if map.contains_key("kind") => self.camel_k(map),
            _ => (
                Vec::new(),
                vec![self.error(
                    RouteErrorKind::InvalidValue(
                        "a route file is a list of routes (`- route: …` or `- from: …`)".into(),
                    ),
                    "",
                )],
            ),
        }
    }

    /// The items of a route list whose node is at `base`.
    pub(super) fn items(&self, items: Vec<Json>, base: &str) -> Loaded {
        let mut routes = Vec::new();
        let mut errors = Vec::new();
        // Top-level error handling (`errorHandler`, `onException`, `onCompletion`,
        // `routeConfiguration`, interceptors) applies to every route loaded with it.
        let mut context = ContextErrors::default();
        for (i, item) in items.into_iter().enumerate() {
            match self.item(item, &format!("{base}/{i}"), &mut context) {
                Ok(r) => routes.extend(r),
                Err(e) => errors.extend(e),
            }
        }
        match self.rest_routes() {
            Ok(r) => routes.extend(r),
            Err(e) => errors.extend(e),
        }
        // Applied once every file of the load is read (`ContextSet::apply`).
        self.context.borrow_mut().push(context);
        (routes, errors)
    }

    /// One list item: a one-key map. A key written beside the item's key (`steps:` level
    /// with `- from:`) is reported at its own line, and the item's key is still read.
    fn item(
        &self,
        item: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Read<Option<RouteDefinition>> {
        let map = self
            .object(item, pointer, "a list item is `route:` or `from:`")
            .map_err(|e| vec![e])?;
        let main = map
            .keys()
            .find(|k| matches!(to_snake_case(k).as_str(), "route" | "from"))
            .or_else(|| map.keys().next())
            .cloned();
        let Some(main) = main else {
            return Err(vec![self.error(
                RouteErrorKind::InvalidValue(
                    "each list item holds exactly one of `route` or `from`".into(),
                ),
                pointer,
            )]);
        };
        let mut errors: Vec<RouteError> = map
            .keys()
            .filter(|k| **k != main)
            .map(|extra| {
                self.error(
                    RouteErrorKind::InvalidValue(format!(
                        "`{extra}` is beside `{main}` on the same list item; a list item holds \
                         one key: indent `{extra}` under `{main}`"
                    )),
                    &format!("{pointer}/{extra}"),
                )
            })
            .collect();
        let mut map = map;
        let body = map.remove(&main).unwrap_or(Json::Null);
        let read = self.top_level(&main, body, pointer, context);
        match read {
            Ok(route) if errors.is_empty() => Ok(route),
            Ok(route) => {
                if let Some(route) = route {
                    self.keep_partial(route);
                }
                Err(errors)
            }
            Err(mut e) => {
                errors.append(&mut e);
                Err(errors)
            }
        }
    }

    /// The one dispatch point for a top-level key: each kind of item has its function.
    fn top_level(
        &self,
        key: &str,
        body: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Read<Option<RouteDefinition>> {
        let at = format!("{pointer}/{key}");
        // Error-handling and REST items configure the file's routes and yield no route
        // themselves (the REST routes are made once the list is read).
        let configured = match to_snake_case(key).as_str() {
            "route" => return self.route(body, &at).map(Some),
            "from" => return self.bare_from(body, &at).map(Some),
            "beans" => return self.beans(body, &at).map(|()| None),
            "error_handler" => self.context_error_handler(body, &at, context),
            "on_exception" => self.context_on_exception(body, &at, context),
            "on_completion" => self.context_on_completion(body, &at, context),
            "route_configuration" => self.route_configuration(body, &at, context),
            "intercept" | "intercept_from" | "intercept_send_to_endpoint" => {
                match super::intercept::InterceptKind::of(&to_snake_case(key)) {
                    Some(kind) => self.intercept(kind, body, &at, &mut context.intercepts),
                    None => Ok(()),
                }
            }
            "rest" => self.rest(body, &at),
            "rest_configuration" => self.rest_configuration(body, &at),
            // Collected before the routes are read (`collect_templates`).
            "route_template" => Ok(()),
            "templated_route" => {
                let (routes, errors) = self.templated_route(body, &at);
                self.instances.borrow_mut().extend(routes);
                return if errors.is_empty() {
                    Ok(None)
                } else {
                    Err(errors)
                };
            }
            other => {
                return Err(vec![
                    match camel_dsl::unsupported(camel_dsl::Kind::TopLevel, other) {
                        Some(message) => self.error(RouteErrorKind::InvalidValue(message), &at),
                        None => self.unknown_key(
                            key,
                            &[
                                "route",
                                "from",
                                "beans",
                                "error_handler",
                                "on_exception",
                                "on_completion",
                                "route_configuration",
                                "intercept",
                                "intercept_from",
                                "intercept_send_to_endpoint",
                                "rest",
                                "rest_configuration",
                                "route_template",
                                "templated_route",
                            ],
                            pointer,
                        ),
                    },
                ])
            }
        };
        configured.map(|()| None).map_err(|e| vec![e])
    }

    /// `- from: …` without `route:`.
    fn bare_from(&self, body: Json, from_pointer: &str) -> Read<RouteDefinition> {
        let mut route = RouteDefinition {
            auto_startup: true,
            ..Default::default()
        };
        let mut errors = Vec::new();
        let steps_pointer = self.from(body, from_pointer, &mut route, &mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        route.source = Some(self.source_map(from_pointer, &steps_pointer));
        Ok(route)
    }

    /// `beans:` entries (`{name, type, properties}`), built from the bean types registered
    /// in Rust when the file's routes are added; the type is checked then.
    fn beans(&self, body: Json, pointer: &str) -> Read<()> {
        let Json::Array(entries) = body else {
            return Err(vec![self.error(
                RouteErrorKind::InvalidValue(
                    "`beans` is a list of `{name, type, properties}` entries".into(),
                ),
                pointer,
            )]);
        };
        let mut errors = Vec::new();
        for (i, entry) in entries.into_iter().enumerate() {
            let at = format!("{pointer}/{i}");
            match self.bean_entry(entry, &at) {
                Ok(bean) => self.beans.borrow_mut().push(bean),
                Err(e) => errors.extend(e),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn bean_entry(&self, entry: Json, pointer: &str) -> Read<BeanDefinition> {
        let map = self
            .object(entry, pointer, "a bean is `{name, type, properties}`")
            .map_err(|e| vec![e])?;
        let mut bean = BeanDefinition::default();
        let mut errors = Vec::new();
        let mut jvm = Vec::new();
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(&key).as_str() {
                "name" => match self.string(value, &at, "name") {
                    Ok(name) => bean.name = name,
                    Err(e) => errors.push(e),
                },
                "type" => match self.string(value, &at, "type") {
                    Ok(t) => {
                        bean.bean_type = t;
                        bean.location = self.locate(&at);
                    }
                    Err(e) => errors.push(e),
                },
                "properties" => match value {
                    Json::Object(p) => bean.properties = p,
                    Json::Null => {}
                    _ => errors.push(self.wrong_type("properties", "a map", &at)),
                },
                // Ways Camel builds a bean in the JVM.
                "constructors" | "factory_method" | "factory_bean" | "builder_class"
                | "builder_method" | "init_method" | "destroy_method" | "script"
                | "script_language" => jvm.push((key, at)),
                _ => errors.push(self.unknown_key(&key, &["name", "type", "properties"], pointer)),
            }
        }
        // A JDBC `DataSource` bean is read from its properties alone (ADR 0119): how the
        // JVM would build it does not matter.
        // One error for the bean, at the first of its keys that need a JVM.
        if crate::datasource_bean::datasource_url(&bean.bean_type, &bean.properties).is_none() {
            if let Some((_, at)) = jvm.first() {
                let keys: Vec<String> = jvm.iter().map(|(k, _)| format!("`{k}`")).collect();
                let verb = if keys.len() == 1 { "builds" } else { "build" };
                let who = if bean.name.is_empty() {
                    String::new()
                } else {
                    format!("bean `{}`: ", bean.name)
                };
                errors.push(self.error(
                    RouteErrorKind::InvalidValue(format!(
                        "{who}{} {verb} a bean in the JVM, which cannot run here: a bean type \
                         registered in Rust builds it from its `properties`",
                        keys.join(", ")
                    )),
                    at,
                ));
            }
        }
        if bean.name.is_empty() {
            errors.push(self.error(
                RouteErrorKind::InvalidValue("a bean needs a `name`".into()),
                pointer,
            ));
        }
        if bean.bean_type.is_empty() {
            errors.push(self.error(
                RouteErrorKind::InvalidValue(
                    "a bean needs a `type`: the name of a bean type registered in Rust".into(),
                ),
                pointer,
            ));
        }
        if errors.is_empty() {
            Ok(bean)
        } else {
            // Kept by name, so that the steps calling it do not each add an error of their
            // own to the one above (`camel validate` still compiles the routes).
            if !bean.name.is_empty() {
                bean.refused = true;
                self.beans.borrow_mut().push(bean);
            }
            Err(errors)
        }
    }

    pub(super) fn source_map(&self, route_pointer: &str, steps_pointer: &str) -> SourceMap {
        SourceMap {
            file: self.file.clone(),
            positions: self.positions.clone(),
            steps_pointer: steps_pointer.to_string(),
            route_pointer: route_pointer.to_string(),
            ..Default::default()
        }
    }

    pub(super) fn object(
        &self,
        value: Json,
        pointer: &str,
        what: &str,
    ) -> Result<Map<String, Json>, RouteError> {
        match value {
            Json::Object(m) => Ok(m),
            Json::Null => Ok(Map::new()),
            _ => Err(self.error(RouteErrorKind::InvalidValue(what.to_string()), pointer)),
        }
    }

    pub(super) fn wrong_type(&self, key: &str, expected: &str, pointer: &str) -> RouteError {
        self.error(
            RouteErrorKind::InvalidValue(format!("`{key}` must be {expected}")),
            pointer,
        )
    }

    pub(super) fn string(
        &self,
        value: Json,
        pointer: &str,
        key: &str,
    ) -> Result<String, RouteError> {
        match value {
            Json::String(s) => Ok(s),
            Json::Number(n) => Ok(n.to_string()),
            _ => Err(self.wrong_type(key, "text", pointer)),
        }
    }

    pub(super) fn boolean(
        &self,
        value: Json,
        pointer: &str,
        key: &str,
    ) -> Result<bool, RouteError> {
        value
            .as_bool()
            .ok_or_else(|| self.wrong_type(key, "true or false", pointer))
    }
}

/// The routes when nothing went wrong, or every error.
fn whole(
    (routes, errors): (Vec<RouteDefinition>, Vec<RouteError>),
) -> Result<Vec<RouteDefinition>, RouteErrors> {
    if errors.is_empty() {
        Ok(routes)
    } else {
        Err(RouteErrors(errors))
    }
}
