//! What the S3 tests against moto share: a component context that offers nothing, a
//! client for moto, and a bucket of a test's own.
#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::primitives::ByteStream;
/// Builds endpoints; the S3 endpoint asks the context for nothing.
pub use camel_api::test_support::NoContext;

/// A client of moto at `endpoint`.
pub fn client(endpoint: &str) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// A bucket name no other test or run uses.
pub fn unique(what: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("camel-{what}-{}-{nanos}", std::process::id())
}

/// A bucket of one test's own.
pub struct Bucket {
    pub client: aws_sdk_s3::Client,
    pub name: String,
}

impl Bucket {
    pub async fn create(endpoint: &str, what: &str) -> Bucket {
        let client = client(endpoint);
        let name = unique(what);
        client.create_bucket().bucket(&name).send().await.unwrap();
        Bucket { client, name }
    }

    pub async fn put(&self, key: &str, body: impl Into<Vec<u8>>) {
        self.client
            .put_object()
            .bucket(&self.name)
            .key(key)
            .body(ByteStream::from(body.into()))
            .send()
            .await
            .unwrap();
    }

    /// The keys, sorted.
    pub async fn keys(&self) -> Vec<String> {
        let out = self
            .client
            .list_objects_v2()
            .bucket(&self.name)
            .send()
            .await
            .unwrap();
        let mut keys: Vec<String> = out
            .contents
            .unwrap_or_default()
            .into_iter()
            .filter_map(|o| o.key)
            .collect();
        keys.sort();
        keys
    }

    /// Waits (up to 20 s) until the bucket holds exactly `want`.
    pub async fn holds(&self, want: &[&str]) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let keys = self.keys().await;
            if keys == want || tokio::time::Instant::now() > deadline {
                return keys;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// An object's body as text.
    pub async fn text(&self, key: &str) -> String {
        let out = self
            .client
            .get_object()
            .bucket(&self.name)
            .key(key)
            .send()
            .await
            .unwrap();
        let bytes = out.body.collect().await.unwrap().into_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }
}
