//! Datasources written the way Spring Boot and Quarkus applications configure them: a
//! JDBC URL (`jdbc:postgresql://host:5432/db`) with the user and password beside it.
//!
//! Camel applications moved to camel-rs keep their `application.properties`; these
//! functions turn `spring.datasource.url`/`username`/`password` (or Quarkus's
//! `quarkus.datasource.jdbc.url`/`username`/`password`) into the URL the `sql:`
//! component and the outbox open.
//!
//! ```
//! let props = [
//!     ("spring.datasource.url", "jdbc:postgresql://db:5432/shop"),
//!     ("spring.datasource.username", "app"),
//!     ("spring.datasource.password", "s3cret"),
//! ];
//! let get = |k: &str| props.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
//! assert_eq!(
//!     camel_sql::datasource_from_properties(get).unwrap().unwrap(),
//!     "postgres://app:s3cret@db:5432/shop"
//! );
//! ```

/// True when `text` is a JDBC URL (`jdbc:…`).
pub(crate) fn is_jdbc(text: &str) -> bool {
    text.trim().to_ascii_lowercase().starts_with("jdbc:")
}

/// The database URL of a JDBC URL, with `user` and `password` put in when given (and not
/// already in it). PostgreSQL, MySQL/MariaDB and SQLite; any other kind is an error.
pub(crate) fn to_url(
    jdbc: &str,
    user: Option<&str>,
    password: Option<&str>,
) -> Result<String, String> {
    let text = jdbc.trim();
    let rest = text
        .get(5..)
        .filter(|_| is_jdbc(text))
        .ok_or_else(|| "not a JDBC URL (`jdbc:…`)".to_string())?;
    let (kind, tail) = rest
        .split_once(':')
        .ok_or_else(|| format!("`{}` names no database kind", camel_api::redact_url(jdbc)))?;
    let scheme = match kind.to_ascii_lowercase().as_str() {
        "postgresql" | "postgres" => "postgres",
        "mysql" | "mariadb" => "mysql",
        "sqlite" => return Ok(format!("sqlite:{tail}")),
        other => {
            return Err(format!(
                "JDBC databases of kind `{other}` are not supported (postgresql, mysql, mariadb, sqlite)"
            ))
        }
    };
    let Some(after) = tail.strip_prefix("//") else {
        return Err(format!("`{}` has no `//host`", camel_api::redact_url(jdbc)));
    };
    let has_user = after
        .split('/')
        .next()
        .is_some_and(|authority| authority.contains('@'));
    let credentials = match (user.filter(|u| !u.is_empty()), has_user) {
        (Some(u), false) => match password.filter(|p| !p.is_empty()) {
            Some(p) => format!(
                "{}:{}@",
                camel_api::percent_encode(u),
                camel_api::percent_encode(p)
            ),
            None => format!("{}@", camel_api::percent_encode(u)),
        },
        _ => String::new(),
    };
    Ok(format!("{scheme}://{credentials}{after}"))
}

/// The datasource URL that Spring Boot's (`spring.datasource.url`, `.username`,
/// `.password`) or Quarkus's (`quarkus.datasource.jdbc.url`, `quarkus.datasource.username`,
/// `.password`) properties describe, looked up with `get`; `Ok(None)` when neither is
/// set. The URL may be a JDBC URL or one the component reads as is (`postgres://…`).
/// The error never holds the password.
pub fn datasource_from_properties(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, String> {
    let sets = [
        (
            "spring.datasource.url",
            "spring.datasource.username",
            "spring.datasource.password",
        ),
        (
            "quarkus.datasource.jdbc.url",
            "quarkus.datasource.username",
            "quarkus.datasource.password",
        ),
    ];
    for (url_key, user_key, password_key) in sets {
        let Some(url) = get(url_key).filter(|u| !u.trim().is_empty()) else {
            continue;
        };
        let (user, password) = (get(user_key), get(password_key));
        if !is_jdbc(&url) {
            return Ok(Some(url));
        }
        return to_url(&url, user.as_deref(), password.as_deref())
            .map(Some)
            .map_err(|why| format!("`{url_key}`: {why}"));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdbc_urls_of_each_kind() {
        assert_eq!(
            to_url(
                "jdbc:postgresql://localhost:5432/test",
                Some("postgres"),
                None
            )
            .unwrap(),
            "postgres://postgres@localhost:5432/test"
        );
        assert_eq!(
            to_url(
                "jdbc:mariadb://h/db?useSSL=false",
                Some("a b"),
                Some("p@ss")
            )
            .unwrap(),
            "mysql://a%20b:p%40ss@h/db?useSSL=false"
        );
        assert_eq!(
            to_url("jdbc:sqlite:/tmp/x.db", None, None).unwrap(),
            "sqlite:/tmp/x.db"
        );
        // A user already in the URL stays.
        assert_eq!(
            to_url("jdbc:postgresql://u@h/db", Some("other"), None).unwrap(),
            "postgres://u@h/db"
        );
        assert!(to_url("jdbc:oracle:thin:@h:1521:x", None, None)
            .unwrap_err()
            .contains("`oracle` are not supported"));
    }

    #[test]
    fn quarkus_properties_and_none() {
        let get = |k: &str| match k {
            "quarkus.datasource.jdbc.url" => Some("jdbc:postgresql://db/q".to_string()),
            "quarkus.datasource.username" => Some("q".to_string()),
            _ => None,
        };
        assert_eq!(
            datasource_from_properties(get).unwrap().as_deref(),
            Some("postgres://q@db/q")
        );
        assert_eq!(datasource_from_properties(|_| None).unwrap(), None);
    }
}
