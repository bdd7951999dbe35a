//! `xslt:PATH` — transform the body (XML) with a stylesheet, through the xee XSLT 3.0
//! engine; the body becomes the serialised result, headers are kept.
//!
//! The stylesheet is read and compiled when the route loads (a missing file or a
//! stylesheet the engine cannot compile is a load error). `PATH` is a file path;
//! Camel's `file:` prefix is accepted, and `classpath:` reads from the current folder, as
//! Camel JBang resolves it. The body is bounded as for `xpath` (size, depth, no DTD).
//!
//! Options: `fail_on_null_body` (default `true`: an empty body fails the exchange;
//! `false` passes it on untouched), `output` (`string`, the default, or `bytes`),
//! `content_cache` (accepted: the stylesheet is always read once). Camel's passing of
//! headers and properties as `xsl:param` values is not supported yet, nor are
//! `output=DOM`/`file` and the Saxon/transformer-factory options.
//!
//! The engine covers a subset of XSLT 3.0 (templates, `apply-templates`,
//! `value-of`, `for-each`, `if`/`choose`, `copy-of`, variables); a stylesheet using
//! what it lacks fails at load. A compiled stylesheet is not `Send`, so each worker
//! thread compiles its own copy on first use.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use camel_api::{
    Body, BoxProcessor, CamelError, Component, ComponentContext, Endpoint, EndpointUri, Exchange,
};
use xee_interpreter::context::StaticContext;
use xee_interpreter::interpreter::Program;
use xee_interpreter::sequence::SerializationParameters;
use xee_name::{Namespaces, FN_NAMESPACE};

use crate::document::{self, XmlError};

/// The largest stylesheet read.
const MAX_STYLESHEET_BYTES: u64 = 4 * 1024 * 1024;
/// Compiled stylesheets one thread keeps; past it the cache starts over.
const PER_THREAD_STYLESHEETS: usize = 64;
const OPTIONS: &[&str] = &["fail_on_null_body", "output", "content_cache"];

/// The `xslt` component.
#[derive(Clone, Copy, Debug, Default)]
pub struct XsltComponent;

#[derive(Debug)]
struct Stylesheet {
    id: u64,
    path: PathBuf,
    text: Arc<str>,
}

#[derive(Debug)]
struct XsltEndpoint {
    uri: Arc<str>,
    stylesheet: Arc<Stylesheet>,
    fail_on_null_body: bool,
    bytes: bool,
}

impl Component for XsltComponent {
    fn scheme(&self) -> &str {
        "xslt"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let bad = |reason: String| CamelError::invalid_uri(raw.clone(), reason);
        let resource = match uri.path() {
            "" => uri.parameters.take_str("resource_uri").unwrap_or_default(),
            path => path.to_string(),
        };
        let path = resource
            .strip_prefix("file:")
            .or_else(|| resource.strip_prefix("classpath:"))
            .unwrap_or(&resource)
            .trim_start_matches("//");
        if path.is_empty() {
            return Err(bad(
                "this endpoint needs a stylesheet, as in `xslt:transforms/order.xsl`".into(),
            ));
        }
        if resource.starts_with("http:")
            || resource.starts_with("https:")
            || resource.starts_with("ref:")
        {
            return Err(bad(format!(
                "`{resource}`: only stylesheets in files are supported (`xslt:file:PATH`)"
            )));
        }
        let p = &mut uri.parameters;
        let fail_on_null_body = p.take_bool("fail_on_null_body")?.unwrap_or(true);
        let bytes = match p.take_choice("output", &["string", "bytes", "dom", "file"])? {
            None | Some("string") => false,
            Some("bytes") => true,
            Some(other) => {
                return Err(bad(format!(
                    "`output={other}` is not supported yet: use string or bytes"
                )))
            }
        };
        p.take_bool("content_cache")?;
        uri.parameters.finish(OPTIONS)?;
        let path = PathBuf::from(path);
        let text = read_stylesheet(&path).map_err(&bad)?;
        let stylesheet = Arc::new(Stylesheet {
            id: next_id(),
            path,
            text: text.into(),
        });
        stylesheet
            .program()
            .map_err(|e| bad(format!("stylesheet `{}`: {e}", stylesheet.path.display())))?;
        Ok(Arc::new(XsltEndpoint {
            uri: raw,
            stylesheet,
            fail_on_null_body,
            bytes,
        }))
    }
}

impl Endpoint for XsltEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let stylesheet = self.stylesheet.clone();
        let (fail_on_null_body, bytes) = (self.fail_on_null_body, self.bytes);
        Ok(BoxProcessor::sync(move |mut exchange: Exchange| {
            if exchange.message.body.is_empty() && !fail_on_null_body {
                return Ok(exchange);
            }
            let xml = document::body_text(&exchange.message.body)?;
            let out = camel_api::blocking::in_place(|| stylesheet.transform(&xml))?;
            exchange.message.body = if bytes {
                Body::from(out.into_bytes())
            } else {
                Body::from(out)
            };
            Ok(exchange)
        })
        .named("xslt"))
    }
}

impl Stylesheet {
    /// This thread's compiled copy.
    fn program(&self) -> Result<std::rc::Rc<Program>, String> {
        thread_local! {
            static PROGRAMS: RefCell<HashMap<u64, std::rc::Rc<Program>>> = RefCell::new(HashMap::new());
        }
        if let Some(program) = PROGRAMS.with(|p| p.borrow().get(&self.id).cloned()) {
            return Ok(program);
        }
        let namespaces = Namespaces::new(
            Namespaces::default_namespaces(),
            String::new(),
            FN_NAMESPACE.to_string(),
        );
        let context = StaticContext::from_namespaces(namespaces);
        let program = guarded(|| {
            xee_xslt_compiler::parse(context, &self.text)
                .map_err(|e| format!("the XSLT engine cannot compile it ({e:?})"))
        })?;
        let program = std::rc::Rc::new(program);
        PROGRAMS.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() >= PER_THREAD_STYLESHEETS {
                p.clear();
            }
            p.insert(self.id, program.clone());
        });
        Ok(program)
    }

    /// The transform of `xml`, serialised.
    fn transform(&self, xml: &str) -> Result<String, CamelError> {
        let failed =
            |e: String| CamelError::processor(format!("xslt `{}`: {e}", self.path.display()));
        document::precheck(xml)?;
        let program = self.program().map_err(failed)?;
        let mut xot = xot::Xot::new();
        let root = xot.parse(xml).map_err(|e| XmlError::Parse(e.to_string()))?;
        document::check_depth(&xot, root)?;
        guarded(|| {
            let mut documents = xee_interpreter::xml::Documents::new();
            let handle = documents
                .add_root(None, root)
                .map_err(|e| format!("the document: {e}"))?;
            let root = documents
                .get_node_by_handle(handle)
                .ok_or_else(|| "the document was not kept".to_string())?;
            let mut builder = program.dynamic_context_builder();
            builder.context_node(root);
            builder.documents(documents);
            let context = builder.build();
            let result = program
                .runnable(&context)
                .many(&mut xot)
                .map_err(|e| format!("{e:?}"))?;
            result
                .serialize(SerializationParameters::new(), &mut xot)
                .map_err(|e| format!("{e:?}"))
        })
        .map_err(failed)
    }
}

/// A regular file of at most [`MAX_STYLESHEET_BYTES`], checked before it is opened.
fn read_stylesheet(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("stylesheet `{shown}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("stylesheet `{shown}` is not a regular file"));
    }
    if meta.len() > MAX_STYLESHEET_BYTES {
        return Err(format!(
            "stylesheet `{shown}` is larger than {MAX_STYLESHEET_BYTES} bytes"
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_STYLESHEET_BYTES).read_to_string(&mut text))
        .map_err(|e| format!("stylesheet `{shown}`: {e}"))?;
    Ok(text)
}

/// Runs xee code, turning a panic inside it into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("the XSLT engine failed on this input".to_string()))
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests;
