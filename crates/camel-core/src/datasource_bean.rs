//! Beans of the JDBC `DataSource` classes Camel files declare (ADR 0119).
//!
//! A Camel file names its database as a bean of a Java class (`org.postgresql.ds.
//! PGSimpleDataSource`, `org.apache.commons.dbcp2.BasicDataSource`, …) with the server,
//! user and password as properties, and `sql:` endpoints refer to it by name
//! (`dataSource: "#bean:dsBean"`). No Java object can be built here, but the properties
//! say everything the `sql:` component needs: such a bean becomes a context resource
//! holding the database's URL, which `sql:` opens as it opens `datasource=jdbc:…`.

use serde_json::{Map, Value as Json};

/// The kind of database a `DataSource` class is for, and its default port; `None` for a
/// connection pool whose `url` says the kind.
struct Class {
    names: &'static [&'static str],
    kind: Option<(&'static str, u16)>,
}

const CLASSES: &[Class] = &[
    Class {
        names: &[
            "org.postgresql.ds.PGSimpleDataSource",
            "org.postgresql.ds.PGPoolingDataSource",
            "org.postgresql.ds.PGConnectionPoolDataSource",
            "org.postgresql.xa.PGXADataSource",
        ],
        kind: Some(("postgresql", 5432)),
    },
    Class {
        names: &[
            "com.mysql.cj.jdbc.MysqlDataSource",
            "com.mysql.cj.jdbc.MysqlConnectionPoolDataSource",
            "com.mysql.cj.jdbc.MysqlXADataSource",
            "com.mysql.jdbc.jdbc2.optional.MysqlDataSource",
        ],
        kind: Some(("mysql", 3306)),
    },
    Class {
        names: &[
            "org.mariadb.jdbc.MariaDbDataSource",
            "org.mariadb.jdbc.MariaDbPoolDataSource",
        ],
        kind: Some(("mariadb", 3306)),
    },
    Class {
        names: &[
            "org.sqlite.SQLiteDataSource",
            "org.apache.commons.dbcp2.BasicDataSource",
            "org.apache.commons.dbcp.BasicDataSource",
            "com.zaxxer.hikari.HikariDataSource",
            "org.apache.tomcat.jdbc.pool.DataSource",
            "org.springframework.jdbc.datasource.DriverManagerDataSource",
            "org.springframework.jdbc.datasource.SimpleDriverDataSource",
            "io.agroal.pool.DataSourceProvider",
        ],
        kind: None,
    },
];

/// The database URL (`jdbc:KIND://[user[:password]@]host[:port]/db…`) a bean of type
/// `bean_type` describes, or `None` when the type is not a `DataSource` class known here.
/// The error names the property that is missing; it never holds the password.
pub(crate) fn datasource_url(
    bean_type: &str,
    properties: &Map<String, Json>,
) -> Option<Result<String, String>> {
    let written = bean_type.trim();
    let class = written.strip_prefix("#class:").unwrap_or(written).trim();
    let known = CLASSES.iter().find(|c| c.names.contains(&class))?;
    let get = |keys: &[&str]| {
        keys.iter().find_map(|k| match properties.get(*k) {
            Some(Json::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(Json::Number(n)) => Some(n.to_string()),
            _ => None,
        })
    };
    let user = get(&["user", "username", "userName"]);
    let password = get(&["password"]);
    let url = match get(&["url", "URL", "jdbcUrl", "jdbcURL"]) {
        Some(url) => url,
        None => {
            let Some((kind, port)) = known.kind else {
                return Some(Err(format!(
                    "a bean of `{class}` needs `url` (a JDBC URL such as \
                     `jdbc:postgresql://localhost:5432/db`)"
                )));
            };
            let Some(server) = get(&["serverName", "serverNames", "host"]) else {
                return Some(Err(format!(
                    "a bean of `{class}` needs `url` or `serverName`"
                )));
            };
            let port = get(&["portNumber", "portNumbers", "port"]).unwrap_or(port.to_string());
            let db = get(&["databaseName", "database"]).unwrap_or_default();
            format!("jdbc:{kind}://{server}:{port}/{db}")
        }
    };
    Some(Ok(with_credentials(
        &url,
        user.as_deref(),
        password.as_deref(),
    )))
}

/// `url` with `user:password@` after its `//` when it has no user already.
fn with_credentials(url: &str, user: Option<&str>, password: Option<&str>) -> String {
    let Some(user) = user else {
        return url.to_string();
    };
    let Some(at) = url.find("//") else {
        return url.to_string();
    };
    let (head, tail) = url.split_at(at + 2);
    if tail.split('/').next().is_some_and(|a| a.contains('@')) {
        return url.to_string();
    }
    let credentials = match password {
        Some(p) => format!(
            "{}:{}@",
            camel_api::percent_encode(user),
            camel_api::percent_encode(p)
        ),
        None => format!("{}@", camel_api::percent_encode(user)),
    };
    format!("{head}{credentials}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(ty: &str, props: Json) -> Option<Result<String, String>> {
        let Json::Object(map) = props else {
            unreachable!()
        };
        datasource_url(ty, &map)
    }

    #[test]
    fn each_shape_gives_a_jdbc_url_with_its_credentials() {
        assert_eq!(
            url(
                "org.postgresql.ds.PGSimpleDataSource",
                json!({"serverName": "db", "portNumber": "5433", "databaseName": "shop",
                       "user": "app", "password": "p@ss"})
            ),
            Some(Ok("jdbc:postgresql://app:p%40ss@db:5433/shop".into()))
        );
        assert_eq!(
            url(
                "#class:org.apache.commons.dbcp2.BasicDataSource",
                json!({"url": "jdbc:postgresql://h:5432/d", "username": "u", "password": "x",
                       "driverClassName": "org.postgresql.Driver"})
            ),
            Some(Ok("jdbc:postgresql://u:x@h:5432/d".into()))
        );
        assert_eq!(
            url(
                "com.mysql.cj.jdbc.MysqlDataSource",
                json!({"url": "jdbc:mysql://root@h:3306/d", "user": "other"})
            ),
            Some(Ok("jdbc:mysql://root@h:3306/d".into()))
        );
        assert_eq!(
            url(
                "com.mysql.cj.jdbc.MysqlDataSource",
                json!({"serverName": "h"})
            ),
            Some(Ok("jdbc:mysql://h:3306/".into()))
        );
        assert!(url("com.example.Thing", json!({})).is_none());
        let e = url(
            "com.zaxxer.hikari.HikariDataSource",
            json!({"password": "secret"}),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.contains("needs `url`") && !e.contains("secret"), "{e}");
    }
}
