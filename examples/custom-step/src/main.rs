//! Runs `routes.yaml` and a builder route with the custom `uppercase` step and `upper`
//! language: `cargo run -p custom-step`.

use camel_api::Exchange;
use camel_core::{CamelContext, RouteBuilder};
use custom_step::{register, Uppercase, UppercaseStep};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = CamelContext::new();
    register(&ctx);
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/routes.yaml");
    let mut routes = camel_core::yaml::load_file(file)?;
    routes.push(
        RouteBuilder::from("direct:built")
            .id("built")
            .uppercase(Uppercase::body())
            .build(),
    );
    ctx.add_routes(routes).await?;
    ctx.start().await?;

    let out = ctx.request("direct:shout", Exchange::new("hello")).await?;
    println!(
        "yaml:    body = {:?}, echo = {:?}",
        out.message.body.as_text(),
        out.header("echo")
    );
    let out = ctx
        .request(
            "direct:shout-header",
            Exchange::new("x").with_header("name", "ada"),
        )
        .await?;
    println!("yaml:    name = {:?}", out.header("name"));
    let out = ctx
        .request("direct:built", Exchange::new("from rust"))
        .await?;
    println!("builder: body = {:?}", out.message.body.as_text());

    // A misspelt option is refused with its place in the file.
    let bad = "- from:\n    uri: direct:bad\n    steps:\n      - uppercase: {hedaer: name}\n";
    let routes = camel_core::yaml::load_str(bad, "bad.yaml")?;
    if let Err(errors) = ctx.validate(&routes).await {
        println!("bad.yaml: {errors}");
    }
    ctx.stop().await;
    Ok(())
}
