//! `camel export --kubernetes`: what it writes for the examples and for a file that uses
//! HTTP, environment placeholders and credentials, checked by reading the manifests and,
//! with `CAMEL_TEST_KUBERNETES_VALIDATE` (the `kubernetes-validate` command from PyPI,
//! which carries the Kubernetes schemas), against the Kubernetes API schemas.

use std::path::{Path, PathBuf};
use std::process::Command;

fn camel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_camel"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Runs `camel export --kubernetes ARGS -o OUT`; panics with its output unless it succeeds.
fn export(args: &[&str], out: &Path) {
    let run = camel()
        .args(["export", "--kubernetes", "-o", out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The manifests of `dir` through `kubernetes-validate --strict`, when the command is given.
fn validate_against_the_schemas(dir: &Path) {
    let Some(validator) =
        camel_api::test_support::service_from_env("CAMEL_TEST_KUBERNETES_VALIDATE")
    else {
        return;
    };
    let manifests: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(!manifests.is_empty());
    let run = Command::new(validator)
        .arg("--strict")
        .args(&manifests)
        .output()
        .expect("kubernetes-validate runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "{}: {said}", dir.display());
    assert!(!said.contains("ERROR"), "{said}");
}

#[test]
fn every_example_exports_manifests_the_schemas_accept() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("hello", &["routes.yaml"], "deployment.yaml"),
        // An HTTP API on a SQLite file: a StatefulSet with a volume, and a Service.
        ("rest-orders", &["routes.yaml"], "statefulset.yaml"),
        // The outbox in the embedded SQLite file.
        ("outbox", &["routes.yaml"], "statefulset.yaml"),
        (
            "outbox-postgres",
            &["producer.yaml", "relay.yaml"],
            "deployment.yaml",
        ),
        ("sinks", &["routes.yaml"], "deployment.yaml"),
        ("resequencer", &["routes.yaml"], "deployment.yaml"),
    ];
    for (example, files, workload) in cases {
        let out = tempfile::tempdir().unwrap();
        let dir = examples().join(example);
        let args: Vec<String> = files
            .iter()
            .map(|f| dir.join(f).to_str().unwrap().to_string())
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        export(&args, out.path());
        assert!(out.path().join(workload).is_file(), "{example}: {workload}");
        let other = if *workload == "deployment.yaml" {
            "statefulset.yaml"
        } else {
            "deployment.yaml"
        };
        assert!(!out.path().join(other).exists(), "{example}: {other}");
        for f in *files {
            assert_eq!(read(&out.path().join("routes").join(f)), read(&dir.join(f)));
        }
        let text = read(&out.path().join(workload));
        assert!(text.contains("path: /health/ready"), "{text}");
        assert!(text.contains("path: /health/live"), "{text}");
        assert!(
            text.contains(&format!("- /app/routes/{}", files[0])),
            "{text}"
        );
        let dockerfile = read(&out.path().join("Dockerfile"));
        assert!(
            dockerfile.contains("COPY routes/ /app/routes/"),
            "{dockerfile}"
        );
        let http = out.path().join("service.yaml");
        if *example == "rest-orders" {
            let service = read(&http);
            assert!(service.contains("name: http"), "{service}");
            assert!(
                service.contains("clusterIP: None"),
                "the StatefulSet's own: {service}"
            );
            assert!(
                text.contains("- 0.0.0.0\n"),
                "HTTP on every interface: {text}"
            );
        } else if *example == "hello" {
            assert!(!http.exists(), "no route serves HTTP");
        }
        validate_against_the_schemas(out.path());
    }
}

/// A route with HTTP, `{{env:…}}` placeholders with and without a default, the cluster on
/// Kubernetes Leases, and properties of which one holds a password.
#[test]
fn env_placeholders_credentials_and_leases() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("api.camel.yaml"),
        "- route:\n    id: api\n    from:\n      uri: platform-http:/hello\n      steps:\n        - setBody: {constant: '{{greeting}} {{env:REGION:eu}} {{env:API_KEY}}'}\n- route:\n    id: tick\n    from:\n      uri: timer:tick\n      steps:\n        - log: '{{db.password}}'\n",
    )
    .unwrap();
    std::fs::write(
        src.path().join("application.properties"),
        "greeting=hello there\ndb.password=s3cret\ncamel.cluster.backend=kubernetes\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = src.path().join("api.camel.yaml");
    let run = camel()
        .args(["export", "--kubernetes", "-o"])
        .arg(out.path())
        .arg(&file)
        .args([
            "--name",
            "hello-api",
            "--image",
            "registry.local/hello:1",
            "--replicas",
            "3",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{said}");
    let deployment = read(&out.path().join("deployment.yaml"));
    for needle in [
        "name: hello-api",
        "replicas: 3",
        "registry.local/hello:1",
        "name: API_KEY",
        "name: hello-api-env",
        "automountServiceAccountToken: true",
        "- /etc/camel/secret/secret.properties",
        "mountPath: /app/routes/application.properties",
    ] {
        assert!(deployment.contains(needle), "{needle} in:\n{deployment}");
    }
    // REGION has a default: its secret key may be missing.
    let region = deployment.find("name: REGION").expect("REGION is passed");
    assert!(
        deployment[region..].contains("optional: true"),
        "{deployment}"
    );
    let config = read(&out.path().join("configmap.yaml"));
    assert!(config.contains("greeting=hello there"), "{config}");
    assert!(
        !config.contains("s3cret"),
        "no credential in a ConfigMap: {config}"
    );
    let example = read(&out.path().join("secret.properties.example"));
    assert!(example.contains("db.password=\n"), "{example}");
    assert!(!example.contains("s3cret"), "{example}");
    let rbac = read(&out.path().join("rbac.yaml"));
    assert!(rbac.contains("coordination.k8s.io"), "{rbac}");
    assert!(rbac.contains("kind: RoleBinding"), "{rbac}");
    validate_against_the_schemas(out.path());
}

/// A Camel K style `master:` route with no backend named: in the pod it runs on
/// Kubernetes Leases (ADR 0172), so the export grants them; a named backend does not.
#[test]
fn a_master_route_without_a_backend_gets_the_lease_role() {
    let export = |properties: Option<&str>| {
        let src = tempfile::tempdir().unwrap();
        let file = src.path().join("leader.camel.yaml");
        std::fs::write(
            &file,
            "- route:\n    id: leader\n    from:\n      uri: master:reports:timer:tick\n      steps:\n        - log: tick\n",
        )
        .unwrap();
        if let Some(p) = properties {
            std::fs::write(src.path().join("application.properties"), p).unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        let run = camel()
            .args(["export", "--kubernetes", "-o"])
            .arg(out.path())
            .arg(&file)
            .args(["--name", "leader", "--image", "registry.local/leader:1"])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let rbac = out.path().join("rbac.yaml");
        let role = rbac.exists().then(|| read(&rbac));
        (out, role)
    };
    let (out, role) = export(None);
    let role = role.expect("a Role for the Leases");
    assert!(role.contains("coordination.k8s.io"), "{role}");
    validate_against_the_schemas(out.path());
    let (_, role) = export(Some(
        "camel.cluster.backend=redis\ncamel.cluster.url=redis://redis:6379\n",
    ));
    assert!(
        !role.unwrap_or_default().contains("coordination.k8s.io"),
        "Redis leases need no Lease role"
    );
}

#[test]
fn a_file_with_errors_exports_nothing() {
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("bad.yaml");
    std::fs::write(
        &file,
        "- route:\n    from:\n      uri: timer:x\n      steps:\n        - nosuchstep: {}\n",
    )
    .unwrap();
    let out = src.path().join("out");
    let run = camel()
        .args(["export", "--kubernetes", "-o"])
        .arg(&out)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(said.contains("nosuchstep"), "{said}");
    assert!(said.contains("nothing exported"), "{said}");
    assert!(!out.exists());
    let good = examples().join("hello/routes.yaml");
    let run = camel()
        .args(["export", "--kubernetes", "--name", "Bad_Name", "-o"])
        .arg(&out)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(said.contains("--name \"Bad_Name\""), "{said}");
    assert!(!out.exists());
}
