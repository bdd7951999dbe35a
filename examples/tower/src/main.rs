//! `cargo run -p example-tower` sends four sample orders through the app in-process and
//! prints the answers; `cargo run -p example-tower -- --serve 127.0.0.1:3000` serves it.

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, addr] = args.as_slice() {
        if flag == "--serve" {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!(
                "POST orders to http://{addr}/orders (headers X-Priority: high, X-Kind: test)"
            );
            axum::serve(listener, example_tower::app()).await?;
            return Ok(());
        }
    }
    let samples = [
        ("two apples", None),
        ("one pear", Some(("x-priority", "high"))),
        ("a probe", Some(("x-kind", "test"))),
        ("", None),
    ];
    for (order, header) in samples {
        let mut request = Request::post("/orders");
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        let response = example_tower::app()
            .oneshot(request.body(Body::from(order))?)
            .await?;
        let status = response.status();
        let text = axum::body::to_bytes(response.into_body(), 64 * 1024).await?;
        println!(
            "{order:?} {header:?} -> {status} {}",
            String::from_utf8_lossy(&text)
        );
    }
    Ok(())
}
