//! The component's typed errors. They reach routes wrapped in
//! [`CamelError::External`](camel_api::CamelError::External), so an error handler (or a
//! test) can downcast the source to [`SqlError`].

use camel_api::CamelError;

/// What went wrong running a `sql:` statement.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// `:#name` found neither in the headers nor in the body's fields.
    #[error("no value for the named parameter `:#{name}` (looked in the headers, then the body's fields)")]
    UnknownParameter {
        /// The parameter's name.
        name: String,
    },
    /// A `:#${…}` expression failed.
    #[error("the parameter `:#{expression}` failed: {message}")]
    Expression {
        /// The expression text.
        expression: String,
        /// Why.
        message: String,
    },
    /// The statement has more `#` placeholders than the body has values.
    #[error("the statement has {expected} `#` parameter(s) but the body gives {given}")]
    MissingPositional {
        /// Placeholders in the statement.
        expected: usize,
        /// Values in the body.
        given: usize,
    },
    /// A value cannot be sent as the type the database expects for it.
    #[error("parameter {index} ({value}) cannot be sent as {expected}")]
    Bind {
        /// 1-based position of the placeholder.
        index: usize,
        /// The value, shortened.
        value: String,
        /// The database's type.
        expected: String,
    },
    /// A result column of a type the component does not convert.
    #[error("column `{column}` has type {type_name}, which `sql:` does not convert; cast it to text in the query")]
    UnsupportedColumn {
        /// The column name.
        column: String,
        /// The database's type name.
        type_name: String,
    },
    /// `SelectOne` got more than one row.
    #[error("output_type=SelectOne but the query returned {rows} rows")]
    NotOne {
        /// Rows returned.
        rows: usize,
    },
    /// The body is not what the option needs (a list for `batch`).
    #[error("{0}")]
    Body(String),
    /// `on_consume` changed a different number of rows than `expected_update_count`.
    #[error("on_consume updated {actual} row(s), expected {expected}")]
    UpdateCount {
        /// Expected count.
        expected: u64,
        /// Actual count.
        actual: u64,
    },
    /// The enclosing `transacted` step's transaction ended before this statement ran
    /// (work handed on after the step finished).
    #[error("the transaction of the `transacted` step has already ended")]
    TransactionEnded,
    /// `fence=true` refused the write: the epoch the exchange started under no longer
    /// leads its namespace (a new leader took over), or the exchange carries none.
    #[error("{0}")]
    Fenced(String),
    /// The database refused or failed the statement. The message is the database's, with
    /// the datasource shown redacted; it never holds a password.
    #[error("database error on {datasource}: {message}")]
    Database {
        /// The redacted datasource.
        datasource: String,
        /// The database's message.
        message: String,
    },
}

impl SqlError {
    /// A database failure, with `datasource` already redacted.
    pub(crate) fn database(datasource: &str, e: sqlx::Error) -> Self {
        // sqlx's messages name hosts but not passwords; redact anyway in case a
        // configuration error echoes the URL.
        SqlError::Database {
            datasource: datasource.to_string(),
            message: camel_api::redact_url(&e.to_string()),
        }
    }
}

impl SqlError {
    /// The pool for `datasource` could not be made (a malformed URL, a kind this build
    /// does not support).
    pub(crate) fn unreachable(datasource: &str, e: &dyn std::fmt::Display) -> Self {
        SqlError::Database {
            datasource: datasource.to_string(),
            message: camel_api::redact_url(&e.to_string()),
        }
    }
}

impl From<SqlError> for CamelError {
    fn from(e: SqlError) -> Self {
        CamelError::external("sql", e)
    }
}
