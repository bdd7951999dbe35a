//! The Pub/Sub bearer token from a metadata server: fetched once, reused while valid,
//! fetched again five minutes before it expires. One small HTTP server plays both the
//! metadata server and Pub/Sub, and records the token each publish carried.

use std::sync::{Arc, Mutex};

use camel_api::Exchange;
use camel_sinks::pubsub::PubSubCodec;
use camel_sinks::{BatchCodec, EntryMeta, SendOutcome};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the fake saw: tokens handed out, and the `Authorization` of each publish.
#[derive(Default)]
struct Seen {
    issued: Vec<String>,
    publishes: Vec<String>,
}

/// Serves tokens `t1`, `t2`, … whose lifetimes are taken in turn from `lifetimes`
/// (seconds), and answers every publish with one message id.
async fn fake_google(lifetimes: Vec<u64>) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let state = seen.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (state, lifetimes) = (state.clone(), lifetimes.clone());
            tokio::spawn(serve(socket, state, lifetimes));
        }
    });
    (format!("http://{addr}"), seen)
}

async fn serve(socket: TcpStream, seen: Arc<Mutex<Seen>>, lifetimes: Vec<u64>) {
    let (read, mut write) = socket.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let (mut length, mut auth, mut flavor) = (0usize, String::new(), false);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await.unwrap_or(0) == 0 {
                return;
            }
            let Some((k, v)) = h.trim_end().split_once(':') else {
                break;
            };
            match k.to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse().unwrap_or(0),
                "authorization" => auth = v.trim().to_string(),
                "metadata-flavor" => flavor = v.trim() == "Google",
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let answer = {
            let mut seen = seen.lock().unwrap();
            if line.starts_with("GET") && line.contains("/service-accounts/default/token") {
                assert!(flavor, "the metadata server needs Metadata-Flavor: Google");
                let n = seen.issued.len();
                let token = format!("t{}", n + 1);
                seen.issued.push(token.clone());
                let lifetime = lifetimes[n.min(lifetimes.len() - 1)];
                format!(
                    r#"{{"access_token":"{token}","expires_in":{lifetime},"token_type":"Bearer"}}"#
                )
            } else {
                seen.publishes.push(auth);
                r#"{"messageIds":["1"]}"#.to_string()
            }
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        if write.write_all(head.as_bytes()).await.is_err()
            || write.write_all(answer.as_bytes()).await.is_err()
        {
            return;
        }
    }
}

async fn publish(codec: &PubSubCodec) {
    let meta = EntryMeta {
        group: None,
        idempotency_key: "k".into(),
    };
    let entry = codec.encode(&Exchange::new("x"), meta).unwrap();
    match codec.send_batch(&[entry]).await {
        SendOutcome::Answered(r) => assert!(r[0].is_ok(), "{r:?}"),
        other => panic!("publish failed: {other:?}"),
    }
}

#[tokio::test]
async fn a_metadata_token_is_reused_while_valid_and_replaced_before_it_expires() {
    // t1 lives 60 s (inside the five-minute margin: replace at once); t2 an hour.
    let (url, seen) = fake_google(vec![60, 3600]).await;
    let codec = PubSubCodec::new("projects/p/topics/t", &url, None).with_metadata_token(&url);
    for _ in 0..3 {
        publish(&codec).await;
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.issued, ["t1", "t2"]);
    assert_eq!(seen.publishes, ["Bearer t1", "Bearer t2", "Bearer t2"]);
}
