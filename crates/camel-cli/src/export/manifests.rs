//! The resources of one export, each a file of the output folder.

use yaml_rust2::Yaml;

use super::yaml::{documents, int, list, map, map_of, s};
use super::{Export, Uses, ADMIN_PORT, HTTP_PORT};

/// Where the container keeps what `camel run` writes (`camel-data/`: the embedded outbox
/// and state files); the root file system is read-only.
const DATA_DIR: &str = "/app/data";
const ROUTES_DIR: &str = "/app/routes";
const ADMIN_TOKEN_DIR: &str = "/var/run/camel-admin";
const SECRET_PROPERTIES_DIR: &str = "/etc/camel/secret";
/// `camel run`'s stop deadline (30 s) and a margin, so Kubernetes does not kill a stop
/// that is still draining.
const GRACE_SECONDS: i64 = 35;

/// Every file of the export but the route files: name and text.
pub(crate) fn render(export: &Export, uses: &Uses) -> Vec<(&'static str, String)> {
    let mut files = Vec::new();
    let workload = workload(export, uses);
    let kind_file = if uses.embedded_state {
        "statefulset.yaml"
    } else {
        "deployment.yaml"
    };
    files.push((kind_file, documents(&[workload])));
    if !uses.config.is_empty() {
        files.push(("configmap.yaml", documents(&[config_map(export, uses)])));
    }
    let mut services = Vec::new();
    if uses.http {
        services.push(service(export, false));
    }
    if uses.embedded_state {
        services.push(service(export, true));
    }
    if !services.is_empty() {
        files.push(("service.yaml", documents(&services)));
    }
    files.push(("rbac.yaml", documents(&rbac(export, uses))));
    if !uses.secret_keys.is_empty() {
        let mut text = String::from(
            "# Values for the properties that hold credentials; they are left out of the\n\
             # ConfigMap. Fill in, then: kubectl create secret generic NAME-secret-properties\n\
             #   --from-file=secret.properties\n",
        )
        .replace("NAME", &export.name);
        for key in &uses.secret_keys {
            text.push_str(&format!("{key}=\n"));
        }
        files.push(("secret.properties.example", text));
    }
    files.push(("Dockerfile", dockerfile(uses)));
    files
}

fn labels(export: &Export) -> Yaml {
    map([
        ("app.kubernetes.io/name", s(&export.name)),
        ("app.kubernetes.io/managed-by", s("camel-rs")),
    ])
}

fn selector(export: &Export) -> Yaml {
    map([("app.kubernetes.io/name", s(&export.name))])
}

fn metadata(name: String, export: &Export) -> Yaml {
    map([("name", s(name)), ("labels", labels(export))])
}

fn workload(export: &Export, uses: &Uses) -> Yaml {
    let pod = map([
        ("metadata", map([("labels", labels(export))])),
        ("spec", pod_spec(export, uses)),
    ]);
    if uses.embedded_state {
        // The embedded SQLite outbox is one process's: one replica, its file on a volume.
        map([
            ("apiVersion", s("apps/v1")),
            ("kind", s("StatefulSet")),
            ("metadata", metadata(export.name.clone(), export)),
            (
                "spec",
                map([
                    ("serviceName", s(format!("{}-headless", export.name))),
                    ("replicas", int(1)),
                    ("selector", map([("matchLabels", selector(export))])),
                    ("template", pod),
                    (
                        "volumeClaimTemplates",
                        list([map([
                            ("metadata", map([("name", s("data"))])),
                            (
                                "spec",
                                map([
                                    ("accessModes", list([s("ReadWriteOnce")])),
                                    (
                                        "resources",
                                        map([("requests", map([("storage", s("1Gi"))]))]),
                                    ),
                                ]),
                            ),
                        ])]),
                    ),
                ]),
            ),
        ])
    } else {
        map([
            ("apiVersion", s("apps/v1")),
            ("kind", s("Deployment")),
            ("metadata", metadata(export.name.clone(), export)),
            (
                "spec",
                map([
                    ("replicas", int(i64::from(export.replicas))),
                    ("selector", map([("matchLabels", selector(export))])),
                    ("template", pod),
                ]),
            ),
        ])
    }
}

fn pod_spec(export: &Export, uses: &Uses) -> Yaml {
    let mut volumes = vec![map([
        ("name", s("admin-token")),
        (
            "secret",
            map([("secretName", s(format!("{}-admin", export.name)))]),
        ),
    ])];
    if !uses.embedded_state {
        volumes.push(map([("name", s("data")), ("emptyDir", map([]))]));
    }
    if !uses.config.is_empty() {
        volumes.push(map([
            ("name", s("properties")),
            (
                "configMap",
                map([("name", s(format!("{}-properties", export.name)))]),
            ),
        ]));
    }
    if !uses.secret_keys.is_empty() {
        volumes.push(map([
            ("name", s("secret-properties")),
            (
                "secret",
                map([(
                    "secretName",
                    s(format!("{}-secret-properties", export.name)),
                )]),
            ),
        ]));
    }
    map([
        ("serviceAccountName", s(&export.name)),
        ("automountServiceAccountToken", Yaml::Boolean(uses.leases)),
        ("terminationGracePeriodSeconds", int(GRACE_SECONDS)),
        (
            "securityContext",
            map([
                ("runAsNonRoot", Yaml::Boolean(true)),
                ("runAsUser", int(65532)),
                ("fsGroup", int(65532)),
            ]),
        ),
        ("containers", list([container(export, uses)])),
        ("volumes", list(volumes)),
    ])
}

fn container(export: &Export, uses: &Uses) -> Yaml {
    let mut args = vec![s("run")];
    for (base, _) in &export.route_files {
        args.push(s(format!("{ROUTES_DIR}/{base}")));
    }
    for arg in [
        "--admin-addr".to_string(),
        format!("0.0.0.0:{ADMIN_PORT}"),
        "--admin-token-file".to_string(),
        format!("{ADMIN_TOKEN_DIR}/token"),
    ] {
        args.push(s(arg));
    }
    if uses.http {
        for arg in ["--host", "0.0.0.0", "--port"] {
            args.push(s(arg));
        }
        args.push(s(HTTP_PORT.to_string()));
    }
    if !uses.secret_keys.is_empty() {
        args.push(s("--properties"));
        args.push(s(format!("{SECRET_PROPERTIES_DIR}/secret.properties")));
    }
    let mut ports = vec![map([
        ("name", s("admin")),
        ("containerPort", int(ADMIN_PORT)),
    ])];
    if uses.http {
        ports.push(map([
            ("name", s("http")),
            ("containerPort", int(HTTP_PORT)),
        ]));
    }
    let mut mounts = vec![
        map([("name", s("data")), ("mountPath", s(DATA_DIR))]),
        map([
            ("name", s("admin-token")),
            ("mountPath", s(ADMIN_TOKEN_DIR)),
            ("readOnly", Yaml::Boolean(true)),
        ]),
    ];
    if !uses.config.is_empty() {
        // Beside the first route file, where `camel run` looks for it.
        mounts.push(map([
            ("name", s("properties")),
            (
                "mountPath",
                s(format!("{ROUTES_DIR}/application.properties")),
            ),
            ("subPath", s("application.properties")),
            ("readOnly", Yaml::Boolean(true)),
        ]));
    }
    if !uses.secret_keys.is_empty() {
        mounts.push(map([
            ("name", s("secret-properties")),
            ("mountPath", s(SECRET_PROPERTIES_DIR)),
            ("readOnly", Yaml::Boolean(true)),
        ]));
    }
    let env = uses.env.iter().map(|(name, optional)| {
        map([
            ("name", s(name)),
            (
                "valueFrom",
                map([(
                    "secretKeyRef",
                    map([
                        ("name", s(format!("{}-env", export.name))),
                        ("key", s(name)),
                        ("optional", Yaml::Boolean(*optional)),
                    ]),
                )]),
            ),
        ])
    });
    let probe = |path: &str, period: i64| {
        map([
            ("httpGet", map([("path", s(path)), ("port", s("admin"))])),
            ("periodSeconds", int(period)),
            ("failureThreshold", int(3)),
        ])
    };
    let mut fields = vec![
        ("name".to_string(), s("camel")),
        ("image".to_string(), s(&export.image)),
        ("args".to_string(), list(args)),
        ("workingDir".to_string(), s(DATA_DIR)),
        ("ports".to_string(), list(ports)),
    ];
    if !uses.env.is_empty() {
        fields.push(("env".to_string(), list(env)));
    }
    fields.extend([
        ("livenessProbe".to_string(), probe("/health/live", 10)),
        ("readinessProbe".to_string(), probe("/health/ready", 5)),
        (
            "resources".to_string(),
            map([
                ("requests", map([("cpu", s("100m")), ("memory", s("64Mi"))])),
                ("limits", map([("memory", s("512Mi"))])),
            ]),
        ),
        (
            "securityContext".to_string(),
            map([
                ("allowPrivilegeEscalation", Yaml::Boolean(false)),
                ("readOnlyRootFilesystem", Yaml::Boolean(true)),
                ("capabilities", map([("drop", list([s("ALL")]))])),
            ]),
        ),
        ("volumeMounts".to_string(), list(mounts)),
    ]);
    map_of(fields)
}

fn config_map(export: &Export, uses: &Uses) -> Yaml {
    let mut text = String::new();
    for (key, value) in &uses.config {
        // `camel run` reads `key=value` lines without escapes, values trimmed: what it
        // read, written back this way, reads the same.
        text.push_str(&format!("{key}={value}\n"));
    }
    map([
        ("apiVersion", s("v1")),
        ("kind", s("ConfigMap")),
        (
            "metadata",
            metadata(format!("{}-properties", export.name), export),
        ),
        ("data", map([("application.properties", s(text))])),
    ])
}

/// The HTTP Service, or (`headless`) the StatefulSet's governing one.
fn service(export: &Export, headless: bool) -> Yaml {
    let (name, port, spec_extra) = if headless {
        (
            format!("{}-headless", export.name),
            ("admin", ADMIN_PORT),
            Some(("clusterIP", s("None"))),
        )
    } else {
        (export.name.clone(), ("http", HTTP_PORT), None)
    };
    let mut spec = vec![
        ("selector".to_string(), selector(export)),
        (
            "ports".to_string(),
            list([map([
                ("name", s(port.0)),
                ("port", int(port.1)),
                ("targetPort", s(port.0)),
            ])]),
        ),
    ];
    if let Some((k, v)) = spec_extra {
        spec.insert(0, (k.to_string(), v));
    }
    map([
        ("apiVersion", s("v1")),
        ("kind", s("Service")),
        ("metadata", metadata(name, export)),
        ("spec", map_of(spec)),
    ])
}

fn rbac(export: &Export, uses: &Uses) -> Vec<Yaml> {
    let mut docs = vec![map([
        ("apiVersion", s("v1")),
        ("kind", s("ServiceAccount")),
        ("metadata", metadata(export.name.clone(), export)),
    ])];
    if uses.leases {
        let role = format!("{}-leases", export.name);
        docs.push(map([
            ("apiVersion", s("rbac.authorization.k8s.io/v1")),
            ("kind", s("Role")),
            ("metadata", metadata(role.clone(), export)),
            (
                "rules",
                list([map([
                    ("apiGroups", list([s("coordination.k8s.io")])),
                    ("resources", list([s("leases")])),
                    (
                        "verbs",
                        list(["get", "list", "watch", "create", "update", "patch"].map(s)),
                    ),
                ])]),
            ),
        ]));
        docs.push(map([
            ("apiVersion", s("rbac.authorization.k8s.io/v1")),
            ("kind", s("RoleBinding")),
            ("metadata", metadata(role.clone(), export)),
            (
                "roleRef",
                map([
                    ("apiGroup", s("rbac.authorization.k8s.io")),
                    ("kind", s("Role")),
                    ("name", s(role)),
                ]),
            ),
            (
                "subjects",
                list([map([
                    ("kind", s("ServiceAccount")),
                    ("name", s(&export.name)),
                ])]),
            ),
        ]));
    }
    docs
}

fn dockerfile(uses: &Uses) -> String {
    let expose = if uses.http {
        format!("EXPOSE {ADMIN_PORT} {HTTP_PORT}")
    } else {
        format!("EXPOSE {ADMIN_PORT}")
    };
    format!(
        "# The `camel` binary plus the route files. Build the binary on Debian 12 (or older\n\
         # glibc) first, then the image from this folder:\n\
         #   cargo build --release -p camel-cli && cp target/release/camel {{this folder}}/\n\
         #   docker build -t IMAGE {{this folder}}\n\
         FROM debian:bookworm-slim\n\
         RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \\\n    \
         && rm -rf /var/lib/apt/lists/*\n\
         COPY camel /usr/local/bin/camel\n\
         COPY routes/ {ROUTES_DIR}/\n\
         WORKDIR {DATA_DIR}\n\
         USER 65532:65532\n\
         {expose}\n\
         ENTRYPOINT [\"/usr/local/bin/camel\"]\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_map_holds_what_camel_run_reads_back() {
        let text = "a.url=postgres://h:5432/db?x=1#frag\ngreeting = hello: there\n";
        let read = camel_core::properties::Properties::parse_properties(text);
        let uses = Uses {
            config: read
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Uses::default()
        };
        let export = Export {
            name: "x".into(),
            image: "x:1".into(),
            replicas: 1,
            route_files: Vec::new(),
        };
        let doc = config_map(&export, &uses);
        let data = doc["data"]["application.properties"].as_str().unwrap();
        let again = camel_core::properties::Properties::parse_properties(data);
        assert_eq!(
            again.iter().collect::<Vec<_>>(),
            read.iter().collect::<Vec<_>>()
        );
        assert_eq!(again.get("greeting"), Some("hello: there"));
    }
}
