//! A circuit breaker in front of an endpoint that fails and then recovers, through the
//! binary: the fallback's output and the recovered endpoint's output are files.

mod support;

use std::path::Path;

use support::{camel, stderr};

fn files(dir: &Path) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.path().file_stem()?.to_str()?.parse().ok()?;
                    Some((n, std::fs::read_to_string(e.path()).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn the_fallback_answers_while_the_endpoint_is_down_and_the_circuit_closes_after() {
    let dir = tempfile::tempdir().unwrap();
    let (live, fallback) = (dir.path().join("live"), dir.path().join("fallback"));
    let routes = dir.path().join("routes.yaml");
    // The backend fails its first two calls, then works. Ticks come every 100 ms; the
    // circuit opens after the two failures and waits 1 s before a trial call, so the
    // ticks in between are short-circuited and the last ones reach the backend again.
    std::fs::write(
        &routes,
        format!(
            r#"
- route:
    id: backend
    from:
      uri: direct:backend
      steps:
        - choice:
            when:
              - simple: "${{header.CamelTimerCounter}} <= 2"
                steps:
                  - throwException: {{exceptionType: java.io.IOException, message: backend down}}
        - setBody: {{simple: "live ${{header.CamelTimerCounter}}"}}
- route:
    id: shop
    from:
      uri: timer:tick
      parameters: {{period: 100, delay: 0, repeatCount: 40}}
      steps:
        - setHeader: {{name: CamelFileName, simple: "${{header.CamelTimerCounter}}.txt"}}
        - circuitBreaker:
            id: backend-breaker
            resilience4jConfiguration:
              slidingWindowSize: 2
              minimumNumberOfCalls: 2
              waitDurationInOpenState: 1s
              permittedNumberOfCallsInHalfOpenState: 1
            steps:
              - to: direct:backend
              - to: 'file:{live}'
            onFallback:
              steps:
                - setBody: {{simple: "fallback (short-circuited: ${{exchangeProperty.CamelResponseShortCircuited}}): ${{exception.message}}"}}
                - to: 'file:{fallback}'
"#,
            live = live.display(),
            fallback = fallback.display(),
        ),
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-messages", "40"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");

    let fell_back = files(&fallback);
    let went_live = files(&live);
    assert_eq!(
        fell_back.len() + went_live.len(),
        40,
        "{fell_back:?}\n{went_live:?}\n{log}"
    );
    // The two failures ran the backend and went to the fallback.
    assert_eq!(
        fell_back[..2],
        [
            (
                1,
                "fallback (short-circuited: false): backend down".to_string()
            ),
            (
                2,
                "fallback (short-circuited: false): backend down".to_string()
            ),
        ],
        "{log}"
    );
    // Then the open circuit answered without the backend.
    assert!(
        fell_back[2..]
            .iter()
            .all(|(_, body)| body.starts_with("fallback (short-circuited: true)")),
        "{fell_back:?}"
    );
    assert!(
        fell_back.len() > 2,
        "some ticks came while the circuit was open: {fell_back:?}"
    );
    // After the wait, a trial call closed the circuit and the rest reached the backend.
    let first_live = went_live
        .first()
        .map(|(n, _)| *n)
        .expect("the backend recovered");
    assert!(went_live.iter().all(|(n, _)| *n >= first_live));
    assert!(
        fell_back.iter().all(|(n, _)| *n < first_live),
        "{fell_back:?}"
    );
    assert_eq!(
        went_live.last().map(|(n, b)| (*n, b.as_str())),
        Some((40, "live 40"))
    );
    assert!(log.contains("circuit breaker state changed"), "{log}");
}
