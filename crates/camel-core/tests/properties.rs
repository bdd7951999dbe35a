//! Property: the YAML loader and the compiler never panic, whatever the route file holds.

use camel_core::CamelContext;
use proptest::prelude::*;

const SAMPLE: &str = r#"- route:
    id: sample
    from:
      uri: timer:tick?period=100
      parameters: {delay: 0}
      steps:
        - set_header: {name: n, simple: "${header.CamelTimerCounter}"}
        - filter:
            simple: "${header.n} > 2 && ${body} contains 'x'"
            steps:
              - transform: {simple: "big ${header.n}"}
              - stop: {}
        - choice:
            when:
              - jsonpath: {expression: "$.a", suppress_exceptions: true}
                steps: [{to: "log:a"}]
            otherwise:
              steps: [{convert_body_to: String}]
        - marshal: {json: {}}
        - to: {uri: "file:/tmp/out", parameters: {file_name: "${exchangeId}"}}
- from:
    uri: direct:x
    steps: [stop]
"#;

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, String),
    DuplicateLine(usize),
    SwapChars(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let len = SAMPLE.len();
    let token = prop_oneof![
        Just(":".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("- ".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("${".to_string()),
        Just("&&".to_string()),
        Just("steps: ".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        "[a-zA-Z_:{}$ .-]{1,6}",
    ];
    prop_oneof![
        (0..len, 1..8usize).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (0..len, token).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (0..30usize).prop_map(Mutation::DuplicateLine),
        (0..len, 0..len).prop_map(|(a, b)| Mutation::SwapChars(a, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    match m {
        Mutation::Delete(at, n) => {
            let at = (*at).min(chars.len());
            let end = (at + n).min(chars.len());
            chars.drain(at..end);
        }
        Mutation::Insert(at, t) => {
            let at = (*at).min(chars.len());
            chars.splice(at..at, t.chars());
        }
        Mutation::DuplicateLine(i) => {
            let lines: Vec<&str> = text.lines().collect();
            if lines.is_empty() {
                return text.to_string();
            }
            let i = i % lines.len();
            let mut out: Vec<&str> = lines.clone();
            out.insert(i, lines[i]);
            return out.join("\n");
        }
        Mutation::SwapChars(a, b) => {
            if !chars.is_empty() {
                let (a, b) = (a % chars.len(), b % chars.len());
                chars.swap(a, b);
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn loading_and_compiling_mutated_files_never_panics(mutations in proptest::collection::vec(mutation(), 1..4)) {
        let mut text = SAMPLE.to_string();
        for m in &mutations {
            text = apply(&text, m);
        }
        if let Ok(routes) = camel_core::yaml::load_str(&text, "mutated.yaml") {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            // Errors are fine; a panic fails the property.
            let _ = runtime.block_on(CamelContext::new().validate(&routes));
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_loader(text in "\\PC{0,200}") {
        let _ = camel_core::yaml::load_str(&text, "random.yaml");
    }
}

#[tokio::test]
async fn the_unmutated_sample_is_valid() {
    let routes = camel_core::yaml::load_str(SAMPLE, "sample.yaml").unwrap();
    CamelContext::new().validate(&routes).await.unwrap();
}
