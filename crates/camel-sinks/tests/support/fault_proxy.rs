//! A small HTTP proxy in front of moto that injects the failures moto cannot produce:
//! per-entry `Failed[]` items in a `SendMessageBatch` answer, and whole-request
//! refusals. It understands just enough HTTP/1.1 for the AWS SDK's JSON protocol.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value as Json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does to `SendMessageBatch` requests.
#[derive(Clone, Debug)]
pub(crate) enum Fault {
    /// Entries whose body contains the text are taken out of the request and answered
    /// as `Failed` (sender fault, `InvalidMessageContents`).
    FailEntriesContaining(&'static str),
    /// A request with any entry whose body contains the text is refused whole (HTTP 400).
    RefuseRequestsContaining(&'static str),
    /// Every request is answered HTTP 400 with this query-compatible error code (as SQS
    /// sends it in `x-amzn-query-error`), whatever it carries.
    RefuseAllWith(&'static str),
}

/// A running proxy.
pub(crate) struct FaultProxy {
    /// Where the SDK should send requests.
    pub(crate) endpoint: String,
    /// `SendMessageBatch` requests seen.
    pub(crate) batch_requests: Arc<AtomicUsize>,
}

/// Starts a proxy to `upstream` (`127.0.0.1:5000`).
pub(crate) async fn start(upstream: String, fault: Fault) -> FaultProxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let batch_requests = count.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (upstream, fault, count) = (upstream.clone(), fault.clone(), count.clone());
            tokio::spawn(async move {
                let _ = serve(socket, &upstream, &fault, &count).await;
            });
        }
    });
    FaultProxy {
        endpoint: format!("http://{addr}"),
        batch_requests,
    }
}

struct Request {
    head: Vec<(String, String)>,
    line: String,
    body: Vec<u8>,
}

async fn read_request(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut head = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).await.ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        head.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = header(&head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).await.ok()?;
    Some(Request {
        head,
        line: line.trim_end().to_string(),
        body,
    })
}

fn header<'a>(head: &'a [(String, String)], name: &str) -> Option<&'a str> {
    head.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

async fn serve(
    socket: TcpStream,
    upstream: &str,
    fault: &Fault,
    count: &AtomicUsize,
) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut reader = BufReader::new(read);
    while let Some(mut req) = read_request(&mut reader).await {
        let is_batch =
            header(&req.head, "x-amz-target").is_some_and(|t| t.ends_with("SendMessageBatch"));
        let mut failed_ids = Vec::new();
        if is_batch {
            count.fetch_add(1, Ordering::SeqCst);
            let mut doc: Json = serde_json::from_slice(&req.body).unwrap_or(Json::Null);
            let entries = doc["Entries"].as_array().cloned().unwrap_or_default();
            let hit =
                |e: &Json, text: &str| e["MessageBody"].as_str().is_some_and(|b| b.contains(text));
            match fault {
                Fault::RefuseRequestsContaining(text) if entries.iter().any(|e| hit(e, text)) => {
                    let body = json!({"__type": "com.amazonaws.sqs#InvalidParameterValue", "message": "refused by the fault proxy"}).to_string();
                    respond(&mut write, "HTTP/1.1 400 Bad Request", &[], body.as_bytes()).await?;
                    continue;
                }
                Fault::FailEntriesContaining(text) => {
                    let (bad, good): (Vec<Json>, Vec<Json>) =
                        entries.into_iter().partition(|e| hit(e, text));
                    failed_ids = bad
                        .iter()
                        .filter_map(|e| e["Id"].as_str().map(str::to_string))
                        .collect();
                    doc["Entries"] = Json::Array(good);
                    req.body = doc.to_string().into_bytes();
                }
                Fault::RefuseAllWith(code) => {
                    let body = json!({"__type": format!("com.amazonaws.sqs#{code}"), "message": "refused by the fault proxy"}).to_string();
                    let query = [("x-amzn-query-error".to_string(), format!("{code};Sender"))];
                    respond(
                        &mut write,
                        "HTTP/1.1 400 Bad Request",
                        &query,
                        body.as_bytes(),
                    )
                    .await?;
                    continue;
                }
                Fault::RefuseRequestsContaining(_) => {}
            }
        }
        let (status, head, body) = forward(upstream, &req).await?;
        let body = if failed_ids.is_empty() {
            body
        } else {
            let mut doc: Json = serde_json::from_slice(&body).unwrap_or(json!({}));
            let failed: Vec<Json> = failed_ids
                .iter()
                .map(|id| json!({"Id": id, "SenderFault": true, "Code": "InvalidMessageContents", "Message": "rejected by the fault proxy"}))
                .collect();
            doc["Failed"] = Json::Array(failed);
            doc.to_string().into_bytes()
        };
        respond(&mut write, &status, &head, &body).await?;
    }
    Ok(())
}

async fn forward(
    upstream: &str,
    req: &Request,
) -> std::io::Result<(String, Vec<(String, String)>, Vec<u8>)> {
    let mut conn = TcpStream::connect(upstream).await?;
    let mut out = format!("{}\r\n", req.line);
    for (k, v) in &req.head {
        if k != "content-length" && k != "connection" {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    out.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        req.body.len()
    ));
    conn.write_all(out.as_bytes()).await?;
    conn.write_all(&req.body).await?;
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let text = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .unwrap_or("HTTP/1.1 502 Bad Gateway")
        .to_string();
    let head: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw.get(split + 4..).unwrap_or_default().to_vec();
    if header(&head, "transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        body = dechunk(&body);
    }
    Ok((status, head, body))
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = data.get(start + size + 2..).unwrap_or_default();
    }
    out
}

async fn respond(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    status: &str,
    head: &[(String, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut out = format!("{status}\r\n");
    for (k, v) in head {
        if !matches!(
            k.as_str(),
            "content-length" | "transfer-encoding" | "connection"
        ) {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    if !head.iter().any(|(k, _)| k == "content-type") {
        out.push_str("content-type: application/x-amz-json-1.0\r\n");
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    write.write_all(out.as_bytes()).await?;
    write.write_all(body).await
}
