//! Expression languages: simple, jsonpath, header, constant.
