//! The headers the consumer sets and the producer reads, as Camel names them.

/// Consumer: the file's path relative to the endpoint's directory (`/`-separated).
/// Producer: the name to write, relative to the endpoint's directory.
pub const FILE_NAME: &str = camel_api::names::FILE_NAME;
/// The file's name without its folders.
pub const FILE_NAME_ONLY: &str = "CamelFileNameOnly";
/// The file's size in bytes.
pub const FILE_LENGTH: &str = "CamelFileLength";
/// The file's last modification, in milliseconds since the Unix epoch (as precise as the
/// server's listing: FTP listings often give minutes only).
pub const FILE_LAST_MODIFIED: &str = "CamelFileLastModified";
/// The server's host name.
pub const FILE_HOST: &str = "CamelFileHost";
/// The file's path on the server (the directory joined with `CamelFileName`).
pub const FILE_PATH: &str = "CamelFilePath";
/// The folder holding the file on the server.
pub const FILE_PARENT: &str = "CamelFileParent";
/// A spooled download's local file: the body is then empty and a streaming `split`, or a
/// producer that uploads from a file, reads it from here.
pub const FILE_ABSOLUTE_PATH: &str = "CamelFileAbsolutePath";
/// Producer: the path written on the server.
pub const FILE_NAME_PRODUCED: &str = "CamelFileNameProduced";
