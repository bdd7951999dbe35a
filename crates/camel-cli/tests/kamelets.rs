//! Kamelets, Pipes and route templates through the binary: the Kamelets built in, a
//! Kamelet file in the catalog's format given on the command line, beside the routes and
//! in a `--kamelets` folder, and each one's located errors from `camel validate`.

mod support;

use std::path::Path;

use support::{camel, stderr};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs `files` to `max` messages; returns the log.
fn run(files: &[&str], extra: &[&str], max: &str) -> String {
    let mut args = vec!["run"];
    args.extend_from_slice(files);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--max-messages", max, "--max-seconds", "60"]);
    let out = camel(&args);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    log
}

fn validate(files: &[&str], extra: &[&str]) -> String {
    let mut args = vec!["validate"];
    args.extend_from_slice(files);
    args.extend_from_slice(extra);
    let out = camel(&args);
    assert!(!out.status.success(), "{}", support::text(&out));
    stderr(&out)
}

/// In the catalog's format: JSON schema properties, `required`, `dependencies`, a
/// template with `{{param}}` and `{{?optional}}`.
const SHOUT: &str = "\
apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: shout-action
  labels:
    camel.apache.org/kamelet.type: action
spec:
  definition:
    title: Shout
    description: Puts a word before the body, in capitals.
    required:
      - word
    type: object
    properties:
      word:
        title: Word
        description: What to put before the body.
        type: string
      repeat:
        title: Repeat
        type: integer
        default: 1
  dependencies:
    - camel:core
    - camel:kamelet
  template:
    from:
      uri: kamelet:source
      steps:
        - set-header:
            name: repeat
            constant: \"{{repeat}}\"
        - set-body:
            simple: \"${uppercase({{word}})} ${body}{{?tail}}\"
";

#[test]
fn built_in_source_and_sink_kamelets_run() {
    let dir = tempfile::tempdir().unwrap();
    let route = write(
        dir.path(),
        "ticks.camel.yaml",
        "\
- route:
    id: ticks
    from:
      uri: kamelet:timer-source?message=tick&period=20
      steps:
        - to: kamelet:log-action?loggerName=through
        - to:
            uri: kamelet:log-sink
            parameters:
              loggerName: ticked
              showHeaders: true
",
    );
    let log = run(&[&route], &[], "6");
    assert!(log.contains("logger=through"), "{log}");
    assert!(log.contains("logger=ticked"), "{log}");
    // The built-in timer-source sets the Content-Type it declares by default.
    assert!(log.contains("Content-Type=text/plain"), "{log}");
    assert!(log.contains("tick"), "{log}");
}

#[test]
fn a_catalog_format_kamelet_from_the_command_line_beside_and_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let route_text = "\
- from:
    uri: timer:t?period=20
    steps:
      - setBody: {constant: hello}
      - to: kamelet:shout-action?word=hey&tail=!
      - to: log:shout
";
    // Given on the command line.
    let kamelet = write(dir.path(), "given/shout.kamelet.yaml", SHOUT);
    let route = write(dir.path(), "given/route.yaml", route_text);
    let log = run(&[&route, &kamelet], &[], "2");
    assert!(log.contains("HEY hello!"), "{log}");
    // Beside the route file, not named.
    let route = write(dir.path(), "beside/route.yaml", route_text);
    write(dir.path(), "beside/shout-action.kamelet.yaml", SHOUT);
    let log = run(&[&route], &[], "2");
    assert!(log.contains("HEY hello!"), "{log}");
    // In a catalog checkout's `kamelets/` folder.
    let route = write(dir.path(), "alone/route.yaml", route_text);
    write(
        dir.path(),
        "catalog/kamelets/shout-action.kamelet.yaml",
        SHOUT,
    );
    let catalog = dir.path().join("catalog").display().to_string();
    let log = run(&[&route], &["--kamelets", &catalog], "2");
    assert!(log.contains("HEY hello!"), "{log}");
    // Without it, the use is a located error that says where Kamelets come from.
    let errors = validate(&[&route], &[]);
    assert!(
        errors.contains("route.yaml:5:")
            && errors.contains("no Kamelet named `shout-action`")
            && errors.contains("--kamelets"),
        "{errors}"
    );
}

#[test]
fn kamelet_parameters_are_checked_where_they_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let kamelet = write(dir.path(), "shout.kamelet.yaml", SHOUT);
    let route = write(
        dir.path(),
        "route.yaml",
        "\
- from:
    uri: direct:a
    steps:
      - to: kamelet:shout-action?repeat=often
- from:
    uri: kamelet:timer-source
    steps:
      - to: log:x
",
    );
    let errors = validate(&[&route, &kamelet], &[]);
    assert!(
        errors.contains("route.yaml:4:")
            && errors.contains(
                "parameter `repeat` of Kamelet `shout-action` is an integer; `often` is not"
            ),
        "{errors}"
    );
    assert!(
        errors.contains(
            "Kamelet `shout-action` needs the parameter `word` (What to put before the body.)"
        ),
        "{errors}"
    );
    assert!(
        errors.contains("route.yaml:6:")
            && errors.contains("Kamelet `timer-source` needs the parameter `message`"),
        "{errors}"
    );
    assert!(!errors.contains("property"), "{errors}");
}

#[test]
fn a_pipe_of_catalog_kamelet_names() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = write(
        dir.path(),
        "pipe.yaml",
        "\
apiVersion: camel.apache.org/v1
kind: Pipe
metadata:
  name: timer-to-log
spec:
  source:
    ref:
      kind: Kamelet
      apiVersion: camel.apache.org/v1
      name: timer-source
    properties:
      message: Hello pipe
      period: 20
  steps:
    - ref:
        kind: Kamelet
        apiVersion: camel.apache.org/v1
        name: insert-header-action
      properties:
        name: origin
        value: pipe-${header.CamelTimerCounter}
  sink:
    ref:
      kind: Kamelet
      apiVersion: camel.apache.org/v1
      name: log-sink
    properties:
      showHeaders: true
",
    );
    let log = run(&[&pipe], &[], "6");
    assert!(log.contains("Hello pipe"), "{log}");
    assert!(log.contains("origin=pipe-1"), "{log}");
    assert!(log.contains("logger=log-sink"), "{log}");
}

#[test]
fn a_route_template_with_defaults_and_templated_routes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "templates.camel.yaml",
        "\
- routeTemplate:
    id: ticker
    parameters:
      - name: name
        description: The timer's name.
      - name: period
        defaultValue: '20'
      - name: greeting
        defaultValue: Hello
    route:
      from:
        uri: timer:{{name}}
        parameters:
          period: '{{period}}'
        steps:
          - setBody:
              simple: '{{greeting}} from {{name}} ({{app.who}})'
          - to: log:{{name}}
- templatedRoute:
    routeTemplateRef: ticker
    routeId: first
    parameters:
      - name: name
        value: one
- templatedRoute:
    routeTemplateRef: ticker
    routeId: second
    parameters:
      - name: name
        value: two
      - name: greeting
        value: Bonjour
",
    );
    let log = run(&[&file], &["--property", "app.who=props"], "6");
    assert!(log.contains("Hello from one (props)"), "{log}");
    assert!(log.contains("Bonjour from two (props)"), "{log}");
    // A missing parameter is named at the templated route; the missing property is
    // named as a property.
    let broken = write(
        dir.path(),
        "broken.camel.yaml",
        &std::fs::read_to_string(&file).unwrap().replace(
            "      - name: name\n        value: two\n",
            "      - name: nmae\n        value: two\n",
        ),
    );
    let errors = validate(&[&broken], &[]);
    assert!(
        errors.contains("broken.camel.yaml:25:")
            && errors
                .contains("route template `ticker` needs the parameter `name` (The timer's name.)"),
        "{errors}"
    );
    assert!(errors.contains("`app.who`"), "{errors}");
}

#[test]
fn a_jbang_folder_run_with_every_file_in_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "README.md",
        "# An example\n\nRun it with `camel run *`.\n",
    );
    write(dir.path(), "metadata.json", "{\"name\": \"example\"}\n");
    write(dir.path(), "Helper.java", "class Helper {}\n");
    write(dir.path(), "extra.properties", "greeting=from the folder\n");
    write(
        dir.path(),
        "route.camel.yaml",
        "- from:\n    uri: timer:t?period=20\n    steps:\n      - log: '{{greeting}}'\n",
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    names.sort();
    let files: Vec<&str> = names.iter().map(String::as_str).collect();
    let log = run(&files, &[], "2");
    assert!(log.contains("from the folder"), "{log}");
    assert!(
        log.contains("Helper.java") && log.contains("camel-rs reads YAML routes"),
        "{log}"
    );
}
