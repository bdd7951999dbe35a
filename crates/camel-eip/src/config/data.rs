//! `marshal`, `unmarshal` and `convert_body_to`.

use camel_api::definition::StepConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// `marshal: {csv: {delimiter: ";"}}`, `marshal: json`…: one data format, in Camel's
/// shape (a map with one key naming the format). The same formats serve `unmarshal`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = super::schema::format_aliases)]
#[serde(rename_all = "snake_case")]
pub enum DataFormat {
    /// JSON (serde_json).
    #[serde(deserialize_with = "or_default")]
    Json(JsonFormat),
    /// CSV (the `csv` crate).
    #[serde(deserialize_with = "or_default")]
    Csv(CsvFormat),
    /// XML to and from a JSON-like value (Camel's `jacksonXml`).
    #[serde(alias = "jacksonXml", deserialize_with = "or_default")]
    JacksonXml(XmlFormat),
    /// Base64 text.
    #[serde(deserialize_with = "or_default")]
    Base64(Base64Format),
    /// A gzip stream (Camel 4's `gzipDeflater`).
    #[serde(
        alias = "gzipDeflater",
        alias = "gzip_deflater",
        deserialize_with = "or_default"
    )]
    Gzip(GzipFormat),
    /// A zlib (deflate) stream, Camel's `zipDeflater`; not a zip archive.
    #[serde(
        alias = "zipDeflater",
        alias = "zip_deflater",
        deserialize_with = "or_default"
    )]
    Zip(ZipFormat),
    /// A zip archive of one entry (Camel's `zipFile`).
    #[serde(alias = "zipFile", deserialize_with = "or_default")]
    ZipFile(ZipFileFormat),
}

/// The data format names this crate implements, as written in YAML (snake_case and the
/// Camel spellings).
pub const DATA_FORMAT_NAMES: &[&str] = &[
    "json",
    "csv",
    "jackson_xml",
    "jacksonXml",
    "base64",
    "gzip",
    "gzip_deflater",
    "gzipDeflater",
    "zip",
    "zip_deflater",
    "zipDeflater",
    "zip_file",
    "zipFile",
];

impl DataFormat {
    /// JSON with its defaults.
    pub fn json() -> JsonFormat {
        JsonFormat::default()
    }
    /// CSV with its defaults (comma, double quote, no header).
    pub fn csv() -> CsvFormat {
        CsvFormat::default()
    }
    /// XML with its defaults.
    pub fn xml() -> XmlFormat {
        XmlFormat::default()
    }
    /// Base64 with its defaults (standard alphabet, no line breaks).
    pub fn base64() -> Base64Format {
        Base64Format::default()
    }
    /// gzip.
    pub fn gzip() -> GzipFormat {
        GzipFormat::default()
    }
    /// zlib/deflate (Camel's `zipDeflater`).
    pub fn zip() -> ZipFormat {
        ZipFormat::default()
    }
    /// A zip archive of one entry (Camel's `zipFile`).
    pub fn zip_file() -> ZipFileFormat {
        ZipFileFormat::default()
    }

    fn from_name(text: &str) -> Option<Self> {
        Some(match text {
            "json" => DataFormat::Json(Default::default()),
            "csv" => DataFormat::Csv(Default::default()),
            "jackson_xml" | "jacksonXml" => DataFormat::JacksonXml(Default::default()),
            "base64" => DataFormat::Base64(Default::default()),
            "gzip" | "gzip_deflater" | "gzipDeflater" => DataFormat::Gzip(Default::default()),
            "zip" | "zip_deflater" | "zipDeflater" => DataFormat::Zip(Default::default()),
            "zip_file" | "zipFile" => DataFormat::ZipFile(Default::default()),
            _ => return None,
        })
    }
}

macro_rules! into_format {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for DataFormat {
            fn from(f: $ty) -> Self {
                DataFormat::$variant(f)
            }
        }
    )*};
}
into_format!(JsonFormat => Json, CsvFormat => Csv, XmlFormat => JacksonXml,
    Base64Format => Base64, GzipFormat => Gzip, ZipFormat => Zip, ZipFileFormat => ZipFile);

/// Options of the JSON data format.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub struct JsonFormat {
    /// Accepted for Camel compatibility (Jackson, Gson…); serde_json is always used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Indent the output (marshal).
    #[serde(default, alias = "prettyPrint", skip_serializing_if = "is_false")]
    pub pretty_print: bool,
    /// Unmarshal: a check on the parsed value. `Map` (or `java.util.Map`, `object`)
    /// requires an object, `List` (`java.util.List`, `array`) an array; another name (a
    /// Java class) is accepted and does not check.
    #[serde(
        default,
        alias = "unmarshalType",
        alias = "unmarshalTypeName",
        alias = "unmarshal_type_name",
        skip_serializing_if = "Option::is_none"
    )]
    pub unmarshal_type: Option<serde_json::Value>,
    /// Unmarshal: the document is a list (Camel's `useList`, a `List` of maps or of
    /// `unmarshal_type`); with `unmarshal_type: Map` each element must be a map.
    #[serde(default, alias = "useList", skip_serializing_if = "is_false")]
    pub use_list: bool,
    /// Accepted for Camel compatibility (Jackson's inclusion rule); no effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
    /// Accepted for Camel compatibility (Jackson features); no effect.
    #[serde(
        default,
        alias = "disableFeatures",
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_features: Option<String>,
    /// Accepted for Camel compatibility (Jackson features); no effect.
    #[serde(
        default,
        alias = "enableFeatures",
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_features: Option<String>,
}

impl JsonFormat {
    /// Indents the marshalled text.
    pub fn pretty_print(mut self, on: bool) -> Self {
        self.pretty_print = on;
        self
    }
    /// Unmarshal checks the value is a `Map` or a `List`.
    pub fn unmarshal_type(mut self, name: &str) -> Self {
        self.unmarshal_type = Some(name.into());
        self
    }
    /// Unmarshal checks the value is a list (of `unmarshal_type`, when given).
    pub fn use_list(mut self, on: bool) -> Self {
        self.use_list = on;
        self
    }
}

/// Options of the CSV data format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields, default)]
pub struct CsvFormat {
    /// The field separator, one character (default `,`).
    #[serde(skip_serializing_if = "is_comma")]
    pub delimiter: String,
    /// The quote character (default `"`).
    #[serde(skip_serializing_if = "is_double_quote")]
    pub quote: String,
    /// Column names, a list or Camel's comma-separated text (`header: "id,name"`).
    /// Marshal writes them as the first line; unmarshal reads rows as maps with these
    /// keys (and treats the first line as data unless `skip_header_record`).
    #[serde(
        deserialize_with = "names_or_text",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub header: Vec<String>,
    /// Unmarshal: a column without a name (an empty header field) is left out of the
    /// maps instead of being an error, as Commons CSV's `allowMissingColumnNames`.
    #[serde(alias = "allowMissingColumnNames", skip_serializing_if = "is_false")]
    pub allow_missing_column_names: bool,
    /// Unmarshal: the first line is a header; rows become maps keyed by it.
    #[serde(
        alias = "useMaps",
        alias = "useOrderedMaps",
        alias = "use_ordered_maps",
        skip_serializing_if = "is_false"
    )]
    pub use_maps: bool,
    /// Unmarshal: drop the first line (with `header` given, the given names are used).
    /// Marshal: do not write the header line.
    #[serde(alias = "skipHeaderRecord", skip_serializing_if = "is_false")]
    pub skip_header_record: bool,
    /// Trim spaces around fields (Camel's `trim`, `ignoreSurroundingSpaces`).
    #[serde(
        alias = "ignoreSurroundingSpaces",
        alias = "ignore_surrounding_spaces",
        skip_serializing_if = "is_false"
    )]
    pub trim: bool,
    /// Accepted for Camel compatibility (`\n` or `\r\n`); lines end with `\n`.
    #[serde(alias = "recordSeparator", skip_serializing_if = "Option::is_none")]
    pub record_separator: Option<String>,
    /// Camel's `ignoreHeaderCase` (Commons CSV's lookup of a column by name without
    /// case): accepted, no effect, as maps here are keyed by the header names as written
    /// and nothing looks a column up by name.
    #[serde(alias = "ignoreHeaderCase", skip_serializing_if = "Option::is_none")]
    pub ignore_header_case: Option<bool>,
}

impl Default for CsvFormat {
    fn default() -> Self {
        CsvFormat {
            delimiter: ",".into(),
            quote: "\"".into(),
            header: Vec::new(),
            allow_missing_column_names: false,
            use_maps: false,
            skip_header_record: false,
            trim: false,
            record_separator: None,
            ignore_header_case: None,
        }
    }
}

impl CsvFormat {
    /// The field separator.
    pub fn delimiter(mut self, c: char) -> Self {
        self.delimiter = c.to_string();
        self
    }
    /// The quote character.
    pub fn quote(mut self, c: char) -> Self {
        self.quote = c.to_string();
        self
    }
    /// Column names (rows become maps with these keys).
    pub fn header<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.header = names.into_iter().map(Into::into).collect();
        self
    }
    /// Unmarshal rows as maps keyed by the first line.
    pub fn use_maps(mut self, on: bool) -> Self {
        self.use_maps = on;
        self
    }
    /// Skip (unmarshal) or omit (marshal) the header line.
    pub fn skip_header_record(mut self, on: bool) -> Self {
        self.skip_header_record = on;
        self
    }
    /// Trim spaces around fields.
    pub fn trim(mut self, on: bool) -> Self {
        self.trim = on;
        self
    }
    /// Leave columns without a name out of the maps instead of failing.
    pub fn allow_missing_column_names(mut self, on: bool) -> Self {
        self.allow_missing_column_names = on;
        self
    }
}

/// Options of the XML data format (Camel's `jacksonXml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields, default)]
pub struct XmlFormat {
    /// Marshal: the root element's name when the value is not a one-key map
    /// (default `root`).
    #[serde(alias = "rootName", skip_serializing_if = "Option::is_none")]
    pub root_name: Option<String>,
    /// Indent the output (marshal).
    #[serde(alias = "prettyPrint", skip_serializing_if = "is_false")]
    pub pretty_print: bool,
    /// Accepted for Camel compatibility (a Java class name); no effect.
    #[serde(
        alias = "unmarshalType",
        alias = "unmarshalTypeName",
        alias = "unmarshal_type_name",
        skip_serializing_if = "Option::is_none"
    )]
    pub unmarshal_type: Option<String>,
}

impl XmlFormat {
    /// The root element's name for values that are not a one-key map.
    pub fn root_name(mut self, name: &str) -> Self {
        self.root_name = Some(name.into());
        self
    }
    /// Indents the marshalled XML.
    pub fn pretty_print(mut self, on: bool) -> Self {
        self.pretty_print = on;
        self
    }
}

/// Options of the base64 data format.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Base64Format {
    /// Marshal: break the text into lines of this many characters (0, the default
    /// here, means one line; Camel's default is 76).
    #[serde(alias = "lineLength", skip_serializing_if = "is_zero")]
    pub line_length: usize,
    /// Marshal: the line separator (default `\r\n`, as Camel).
    #[serde(alias = "lineSeparator", skip_serializing_if = "Option::is_none")]
    pub line_separator: Option<String>,
    /// Use the URL-safe alphabet (`-` and `_`), without padding on marshal.
    #[serde(alias = "urlSafe", skip_serializing_if = "is_false")]
    pub url_safe: bool,
}

impl Base64Format {
    /// Breaks marshalled text into lines.
    pub fn line_length(mut self, n: usize) -> Self {
        self.line_length = n;
        self
    }
    /// Uses the URL-safe alphabet.
    pub fn url_safe(mut self, on: bool) -> Self {
        self.url_safe = on;
        self
    }
}

/// The gzip data format (no options).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GzipFormat {}

/// The zlib/deflate data format (Camel's `zipDeflater`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ZipFormat {
    /// The compression level, 0–9 (default 6; Camel's default -1 means 6).
    #[serde(alias = "compressionLevel", skip_serializing_if = "Option::is_none")]
    pub compression_level: Option<i32>,
}

/// Options of the zip archive data format (Camel's `zipFile`): marshal writes an archive
/// of one entry named after the `CamelFileName` header, unmarshal reads an archive of one
/// entry back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ZipFileFormat {
    /// Marshal: keep the directories of `CamelFileName` in the entry's name (by default
    /// only the last part is kept, as Camel).
    #[serde(alias = "preservePathElements", skip_serializing_if = "is_false")]
    pub preserve_path_elements: bool,
    /// Unmarshal: the most bytes the entry may inflate to. Camel's default is 1 GiB and
    /// -1 turns the bound off; here the bound is at most 64 MiB, which is also the
    /// default and what -1 means.
    #[serde(alias = "maxDecompressedSize", skip_serializing_if = "Option::is_none")]
    pub max_decompressed_size: Option<i64>,
    /// Camel's streaming of an archive of several entries into a `split`: not supported
    /// yet; `true` is refused when the route loads.
    #[serde(alias = "usingIterator", skip_serializing_if = "is_false")]
    pub using_iterator: bool,
    /// Camel's option of `using_iterator` (empty folders as entries): accepted, no
    /// effect without it.
    #[serde(alias = "allowEmptyDirectory", skip_serializing_if = "is_false")]
    pub allow_empty_directory: bool,
}

/// Older name of [`JsonFormat`].
pub type JsonMarshal = JsonFormat;
/// Older name of [`JsonFormat`].
pub type JsonUnmarshal = JsonFormat;

/// `marshal: {json: {pretty_print: true}}` or `marshal: json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Marshal(pub DataFormat);

/// `unmarshal: {csv: {use_maps: true}}` or `unmarshal: json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Unmarshal(pub DataFormat);

impl StepConfig for Marshal {
    const NAME: &'static str = "marshal";

    fn from_scalar(text: &str) -> Option<Self> {
        DataFormat::from_name(text).map(Marshal)
    }
}

impl StepConfig for Unmarshal {
    const NAME: &'static str = "unmarshal";

    fn from_scalar(text: &str) -> Option<Self> {
        DataFormat::from_name(text).map(Unmarshal)
    }
}

/// `convert_body_to: {type: String}` or `convert_body_to: String`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvertBodyTo {
    /// `String`, `bytes` or `json` (Camel's Java class names are accepted too).
    #[serde(rename = "type")]
    pub to: String,
    /// The character set between text and bytes: `UTF-8` (the default), `US-ASCII` or
    /// `ISO-8859-1`; other names are refused at load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// `true` (the default): a body that cannot be converted fails the exchange; `false`:
    /// it becomes empty, as Camel's `mandatory: false` gives null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandatory: Option<bool>,
}

impl StepConfig for ConvertBodyTo {
    const NAME: &'static str = "convert_body_to";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(ConvertBodyTo {
            to: text.into(),
            ..Default::default()
        })
    }
}

impl From<crate::convert::BodyType> for ConvertBodyTo {
    fn from(to: crate::convert::BodyType) -> Self {
        use crate::convert::BodyType;
        let name = match to {
            BodyType::Text => "String",
            BodyType::Bytes => "bytes",
            BodyType::Json => "json",
        };
        ConvertBodyTo {
            to: name.into(),
            ..Default::default()
        }
    }
}

/// Column names as a list, or as one comma-separated text (Camel's YAML reads a scalar
/// `header: "id,name"` so); names are trimmed.
fn names_or_text<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::de::Error;
    use serde_json::Value;
    let name = |v: Value| match v {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(D::Error::custom(format!(
            "a column name is text, got `{other}`"
        ))),
    };
    match Value::deserialize(d)? {
        Value::Null => Ok(Vec::new()),
        Value::Array(names) => names.into_iter().map(name).collect(),
        Value::String(text) if text.trim().is_empty() => Ok(Vec::new()),
        Value::String(text) => Ok(text.split(',').map(|n| n.trim().to_string()).collect()),
        other => Err(D::Error::custom(format!(
            "`header` takes a list of column names or one comma-separated text, got `{other}`"
        ))),
    }
}

/// A key written with no value (`json:`) means the format with its defaults.
fn or_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_comma(s: &str) -> bool {
    s == ","
}

fn is_double_quote(s: &str) -> bool {
    s == "\""
}
