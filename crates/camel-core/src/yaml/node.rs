//! Parses YAML into JSON values while remembering where every node was written, so that
//! errors found later (an unknown key, a wrong type, a bad expression) can name the line
//! and column.

use std::collections::HashMap;

use camel_api::suggest::to_snake_case;
use serde_json::{Map, Value as Json};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A parsed document: its value and the position of every node by JSON pointer.
#[derive(Debug)]
pub(crate) struct Spanned {
    pub(crate) value: Json,
    pub(crate) positions: HashMap<String, (usize, usize)>,
}

/// A YAML syntax error with its position.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    pub(crate) message: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

enum Frame {
    Seq {
        items: Vec<Json>,
        pointer: String,
    },
    Map {
        map: Map<String, Json>,
        pointer: String,
        key: Option<String>,
    },
}

/// Route files are small; these bounds stop a hostile document (aliases that expand
/// exponentially, long strings repeated through aliases, nesting that exhausts the stack,
/// long keys nested deep above many values) long before memory or time runs out. The size
/// counts every value at a fixed cost plus the bytes of its text (keys included), aliases
/// at their full expansion.
const MAX_SIZE: usize = 64 << 20;
/// The bytes of the key paths remembered for error positions (one per key and value; a
/// path grows with the keys above it). Ordinary files need well under a megabyte.
const MAX_PATH_BYTES: usize = 16 << 20;
const MAX_DEPTH: usize = 128;
/// What one value costs in [`MAX_SIZE`] besides its text.
const VALUE_COST: usize = 16;

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    docs: Vec<Spanned>,
    positions: HashMap<String, (usize, usize)>,
    /// Anchored values, with their size and depth.
    anchors: HashMap<usize, (Json, usize, usize)>,
    anchor_stack: Vec<usize>,
    /// Size built so far (see [`MAX_SIZE`]).
    size: usize,
    /// Key path bytes remembered so far (see [`MAX_PATH_BYTES`]), frames' copies included.
    path_bytes: usize,
    error: Option<SyntaxError>,
}

/// The size of `value` (see [`MAX_SIZE`]) and its depth (1 for a scalar).
fn measure(value: &Json) -> (usize, usize) {
    match value {
        Json::Array(items) => items.iter().map(measure).fold((VALUE_COST, 1), |acc, m| {
            (acc.0.saturating_add(m.0), acc.1.max(m.1 + 1))
        }),
        Json::Object(map) => map.iter().fold((VALUE_COST, 1), |acc, (k, v)| {
            let m = measure(v);
            (
                acc.0.saturating_add(m.0 + k.len() + VALUE_COST),
                acc.1.max(m.1 + 1),
            )
        }),
        Json::String(s) => (VALUE_COST + s.len(), 1),
        _ => (VALUE_COST, 1),
    }
}

pub(super) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn pos(mark: &Marker) -> (usize, usize) {
    (mark.line(), mark.col() + 1)
}

fn plain_scalar(text: &str) -> Json {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Json::Null,
        "true" | "True" | "TRUE" => Json::Bool(true),
        "false" | "False" | "FALSE" => Json::Bool(false),
        _ => {
            let numeric = text
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
                && text.chars().any(|c| c.is_ascii_digit());
            if numeric {
                if let Ok(i) = text.parse::<i64>() {
                    return Json::from(i);
                }
                if let Some(n) = text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                {
                    return Json::Number(n);
                }
            }
            Json::String(text.to_string())
        }
    }
}

impl Builder {
    /// The pointer the next value will have.
    fn next_pointer(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some(Frame::Seq { items, pointer }) => Some(format!("{pointer}/{}", items.len())),
            Some(Frame::Map {
                pointer,
                key: Some(k),
                ..
            }) => Some(format!("{pointer}/{}", escape(&to_snake_case(k)))),
            Some(Frame::Map { key: None, .. }) => None,
        }
    }

    fn fail(&mut self, message: String, mark: &Marker) {
        if self.error.is_none() {
            let (line, column) = pos(mark);
            self.error = Some(SyntaxError {
                message,
                line,
                column,
            });
        }
    }

    /// Counts `n` more of [`MAX_SIZE`]; false (and an error) past it.
    fn grow(&mut self, n: usize, mark: &Marker) -> bool {
        self.size = self.size.saturating_add(n);
        if self.size > MAX_SIZE {
            self.fail(
                format!(
                    "the document expands to more than {} MiB (aliases?)",
                    MAX_SIZE >> 20
                ),
                mark,
            );
            return false;
        }
        true
    }

    /// Remembers where the value at `pointer` was written, counting the pointer's bytes
    /// (see [`MAX_PATH_BYTES`]); false (and an error) past the bound.
    fn remember(&mut self, pointer: String, mark: &Marker) -> bool {
        self.path_bytes = self.path_bytes.saturating_add(pointer.len());
        if self.path_bytes > MAX_PATH_BYTES {
            self.fail(
                format!(
                    "the key paths of the document's values add up to more than {} MiB \
                     (very long keys nested above many values)",
                    MAX_PATH_BYTES >> 20
                ),
                mark,
            );
            return false;
        }
        self.positions.entry(pointer).or_insert(pos(mark));
        true
    }

    fn push_value(&mut self, value: Json, anchor: usize, mark: &Marker) {
        if anchor > 0 {
            let (size, depth) = measure(&value);
            self.anchors.insert(anchor, (value.clone(), size, depth));
        }
        match self.stack.last_mut() {
            // A document's root is complete: the positions recorded so far are its own.
            None => self.docs.push(Spanned {
                value,
                positions: std::mem::take(&mut self.positions),
            }),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { map, key, pointer }) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => {
                    let Json::String(k) = value else {
                        let text = match value {
                            Json::Null => String::new(),
                            Json::Bool(_) | Json::Number(_) => value.to_string(),
                            _ => {
                                self.fail("a mapping key must be a plain value".into(), mark);
                                return;
                            }
                        };
                        return self.accept_key(text, mark);
                    };
                    let _ = pointer;
                    self.accept_key(k, mark)
                }
            },
        }
    }

    /// Keys are kept as written (a header name or an endpoint parameter is the user's
    /// data); only the position index uses snake_case, so an error found under a step's
    /// canonical name (`set_header`) still finds the key written `setHeader`.
    fn accept_key(&mut self, raw: String, mark: &Marker) {
        let Some(Frame::Map { map, key, pointer }) = self.stack.last_mut() else {
            return;
        };
        if map.contains_key(&raw) {
            let message = format!("duplicate key `{raw}`");
            self.fail(message, mark);
            return;
        }
        let snake = to_snake_case(&raw);
        let p = format!("{pointer}/{}", escape(&snake));
        // A key written in another spelling (`setHeader`) is also remembered under its own
        // spelling below the snake_case path of its map, so that messages can echo the
        // file's spelling (see `SourceMap::spell_path`). Such a pointer never answers a
        // lookup by snake_case pointer: it holds an upper-case letter or a `-`.
        let written = (snake != raw).then(|| format!("{pointer}/{}", escape(&raw)));
        *key = Some(raw);
        if self.remember(p, mark) {
            if let Some(w) = written {
                self.remember(w, mark);
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match ev {
            Event::Scalar(text, style, anchor, _tag) => {
                if !self.grow(VALUE_COST + text.len(), &mark) {
                    return;
                }
                let value = if style == TScalarStyle::Plain {
                    plain_scalar(&text)
                } else {
                    Json::String(text)
                };
                if let Some(p) = self.next_pointer() {
                    if !self.remember(p, &mark) {
                        return;
                    }
                }
                self.push_value(value, anchor, &mark);
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                let Some(pointer) = self.next_pointer() else {
                    self.fail("a mapping key must be a plain value".into(), &mark);
                    return;
                };
                if self.stack.len() >= MAX_DEPTH {
                    self.fail(format!("nested deeper than {MAX_DEPTH} levels"), &mark);
                    return;
                }
                // The frame keeps its own copy of the pointer: counted twice.
                self.path_bytes = self.path_bytes.saturating_add(pointer.len());
                if !self.grow(VALUE_COST, &mark) || !self.remember(pointer.clone(), &mark) {
                    return;
                }
                self.anchor_stack.push(anchor);
                self.stack.push(if matches!(ev, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        pointer,
                    }
                } else {
                    Frame::Map {
                        map: Map::new(),
                        pointer,
                        key: None,
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let anchor = self.anchor_stack.pop().unwrap_or(0);
                let value = match self.stack.pop() {
                    Some(Frame::Seq { items, .. }) => Json::Array(items),
                    Some(Frame::Map { map, .. }) => Json::Object(map),
                    None => return,
                };
                self.push_value(value, anchor, &mark);
            }
            Event::Alias(id) => {
                let Some((_, size, depth)) = self.anchors.get(&id) else {
                    self.push_value(Json::Null, 0, &mark);
                    return;
                };
                let (size, depth) = (*size, *depth);
                if self.stack.len() + depth > MAX_DEPTH {
                    self.fail(format!("nested deeper than {MAX_DEPTH} levels"), &mark);
                    return;
                }
                if !self.grow(size, &mark) {
                    return;
                }
                let value = self
                    .anchors
                    .get(&id)
                    .map(|a| a.0.clone())
                    .unwrap_or_default();
                self.push_value(value, 0, &mark);
            }
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd
            | Event::Nothing => {}
        }
    }
}

/// Refuses the characters YAML does not allow in a file (C0 and C1 controls other than
/// tab, line breaks and NEL; DEL). The parser stops at a NUL as if the file ended there,
/// which cut a value short and dropped the rest of the file without a word.
fn unprintable(text: &str) -> Result<(), SyntaxError> {
    let allowed = |c: char| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\u{85}');
    let Some(at) = text.find(|c: char| !allowed(c)) else {
        return Ok(());
    };
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let c = text[at..].chars().next().unwrap_or_default();
    Err(SyntaxError {
        message: format!(
            "control character U+{:04X} is not allowed in a YAML file (write it as an escape such as \"\\x{:02X}\" inside double quotes)",
            c as u32, c as u32
        ),
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    })
}

/// Parses `text`, a single YAML document (`None` when it is empty).
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Result<Option<Spanned>, SyntaxError> {
    Ok(parse_all(text, "test.yaml")?.pop())
}

/// Parses every document of `text` (`---` separates them, as in Camel JBang files), each
/// with its own positions: pointers restart at every document. `file` names the text in
/// the warning below (empty when there is no file).
pub(crate) fn parse_all(text: &str, file: &str) -> Result<Vec<Spanned>, SyntaxError> {
    match parse_strict(text) {
        Err(e) if e.message.contains("invalid indentation in quoted scalar") => {
            // SnakeYAML (Camel's parser) reads a double-quoted text whose next lines stand
            // at its key's indentation, as Jackson and some editors write it; the YAML
            // spec wants them indented deeper. Read it as Camel does, and say so. The
            // rewritten text goes through the same parser, with the same bounds (size,
            // depth, aliases), and keeps every line where it was.
            let Some((fixed, (line, column))) = reindent_quoted(text) else {
                return Err(e);
            };
            match parse_strict(&fixed) {
                Ok(docs) => {
                    tracing::warn!(
                        file,
                        line,
                        column,
                        "{file}:{line}:{column}: a double-quoted text continues on lines at its \
                         key's indentation, which YAML forbids and Camel's parser accepts: read \
                         as Camel reads it (indent the continued lines to keep this warning away)"
                    );
                    Ok(docs)
                }
                Err(_) => Err(e),
            }
        }
        other => other,
    }
}

/// `text` with the continuation lines of each multi-line double-quoted value indented two
/// columns past the line that opened it, and the line and column of the first line moved;
/// `None` when nothing was changed. Line numbers stay as they were, so positions still
/// point at the user's lines.
///
/// The padding is bounded: a text that would grow past twice its size (plus 64 KiB) is
/// not rewritten, so many short lines under a deeply indented key cannot make the
/// rewritten copy cost far more memory than the file the loader's size bound admitted.
fn reindent_quoted(text: &str) -> Option<(String, (usize, usize))> {
    let limit = text.len().saturating_mul(2).saturating_add(64 * 1024);
    let mut out = String::with_capacity(text.len() + 64);
    let mut open: Option<usize> = None;
    let mut first: Option<(usize, usize)> = None;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let mut line = line.to_string();
        if let Some(base) = open {
            if indent <= base && !line.trim().is_empty() {
                let pad = base + 2 - indent;
                if out.len() + pad + line.len() > limit {
                    return None;
                }
                line = format!("{}{line}", " ".repeat(pad));
                first.get_or_insert((number + 1, indent + 1));
            }
        }
        // Whether the line leaves a double-quoted text open (quotes outside single quotes
        // and comments, `\"` escaped).
        let mut inside = open.is_some();
        let mut single = false;
        let mut escaped = false;
        for c in line.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if inside => escaped = true,
                '\'' if !inside => single = !single,
                '"' if !single => inside = !inside,
                '#' if !inside && !single => break,
                _ => {}
            }
        }
        open = match (open, inside) {
            (None, true) => Some(indent),
            (Some(base), true) => Some(base),
            (_, false) => None,
        };
        out.push_str(&line);
    }
    first.map(|at| (out, at))
}

fn parse_strict(text: &str) -> Result<Vec<Spanned>, SyntaxError> {
    unprintable(text)?;
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    if let Err(e) = parser.load(&mut builder, true) {
        let (line, column) = pos(e.marker());
        return Err(SyntaxError {
            message: e.info().to_string(),
            line,
            column,
        });
    }
    if let Some(e) = builder.error {
        return Err(e);
    }
    Ok(builder.docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_text_continued_at_its_key_s_indentation_reads_as_camel_reads_it() {
        let text =
            "- log:\n    message: \"first part\n    second part\"\n- x: 'it''s \"not\" open'\n";
        let docs = parse_all(text, "test.yaml").unwrap();
        assert_eq!(
            docs[0].value,
            serde_json::json!([
                {"log": {"message": "first part second part"}},
                {"x": "it's \"not\" open"}
            ])
        );
        // Other indentation errors stay errors.
        assert!(parse_all("- a: \"x\n b\"\n  c: d\n", "test.yaml").is_err());
    }

    #[test]
    fn the_rewritten_quoted_text_stays_within_twice_the_file() {
        // A quoted text opened 20,000 columns deep, then 20,000 one-letter lines at the
        // margin: padding each would make a copy of some 400 MB from a file of 100 KB.
        let mut text = format!("{}a: \"x\n", " ".repeat(20_000));
        text.push_str(&"b\n".repeat(20_000));
        text.push_str("\"\n");
        assert!(reindent_quoted(&text).is_none());
        assert!(parse_all(&text, "test.yaml").is_err());
        // One such line is padded as usual.
        assert!(reindent_quoted("- a: \"x\nb\"\n").is_some());
    }

    #[test]
    fn alias_bombs_and_deep_nesting_are_refused() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let Err(err) = parse(&bomb) else {
            panic!("the alias bomb was accepted")
        };
        assert!(err.message.contains("more than"), "{}", err.message);
        assert!(err.line >= 6, "{}", err.line);

        // Few values, but a long string repeated through aliases.
        let long = format!(
            "s: &s \"{}\"\nb: &b [{}]\nc: &c [{}]\n",
            "x".repeat(100_000),
            vec!["*s"; 100].join(", "),
            vec!["*b"; 100].join(", ")
        );
        let Err(err) = parse(&long) else {
            panic!("the string bomb was accepted")
        };
        assert!(err.message.contains("more than"), "{}", err.message);

        // Depth built through aliases.
        let mut chain = format!("a0: &a0 {}x{}\n", "[".repeat(100), "]".repeat(100));
        chain.push_str(&format!(
            "a1: &a1 {}*a0{}\n",
            "[".repeat(100),
            "]".repeat(100)
        ));
        let Err(err) = parse(&chain) else {
            panic!("the deep alias chain was accepted")
        };
        assert!(err.message.contains("deeper than 128"), "{}", err.message);

        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let Err(err) = parse(&deep) else {
            panic!("the deep nesting was accepted")
        };
        assert!(err.message.contains("deeper than 128"), "{}", err.message);

        // An ordinary anchor still works.
        let ok = parse("base: &b {x: 1}\nuse: *b\n").unwrap().unwrap();
        assert_eq!(ok.value["use"]["x"], 1);
    }

    #[test]
    fn long_keys_nested_above_many_values_are_bounded() {
        // 100 nested 2,000-byte keys above 15,000 leaves: a 320 KB document whose position
        // table held a 200 KB path per leaf (3.7 GB and 10 s before the path was counted).
        let nest = |depth: usize, leaves: usize| {
            let mut doc = String::new();
            for d in 0..depth {
                doc.push_str(&format!("{{{}{d}: ", "k".repeat(2_000)));
            }
            let leaves: Vec<String> = (0..leaves).map(|i| format!("l{i}: 1")).collect();
            doc.push_str(&format!("{{{}}}", leaves.join(", ")));
            doc.push_str(&"}".repeat(depth));
            doc
        };
        let hostile = nest(100, 15_000);
        let Err(err) = parse(&hostile) else {
            panic!("the deep-path document was accepted")
        };
        assert!(err.message.contains("key paths"), "{}", err.message);
        assert!(err.message.contains("more than 16 MiB"), "{}", err.message);
        // Long keys nested less deep, with a few leaves, make an ordinary document.
        let fine = parse(&nest(20, 10)).unwrap().unwrap();
        assert!(fine.positions.len() > 20);
    }

    #[test]
    fn records_positions_by_snake_case_and_keeps_keys_as_written() {
        let doc = parse("- route:\n    id: a\n    from:\n      uri: timer:x\n      steps:\n        - setHeader: {name: x, constant: 1}\n").unwrap();
        let doc = doc.unwrap();
        let v = &doc.value;
        assert_eq!(
            v[0]["route"]["from"]["steps"][0]["setHeader"]["constant"],
            1
        );
        assert_eq!(doc.positions["/0/route/id"], (2, 5));
        assert_eq!(doc.positions["/0/route/from/steps/0/set_header"].0, 6);
    }

    #[test]
    fn syntax_error_has_position() {
        let e = parse("- route: {id: a\n").unwrap_err();
        assert!(e.line >= 1, "{e:?}");
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert!(e.message.contains("duplicate"), "{e:?}");
    }

    #[test]
    fn each_document_has_its_own_positions() {
        let docs = parse_all("- a: 1\n---\n- b: 2\n  c: 3\n", "test.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].positions["/0/a"], (1, 3));
        assert_eq!(docs[1].positions["/0/b"], (3, 3));
        assert!(!docs[1].positions.contains_key("/0/a"));
    }
}
