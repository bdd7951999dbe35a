//! An in-process OTLP/HTTP receiver: takes the spans a `camel` process exports, decodes
//! their protobuf bodies and hands them to the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// A span as the tests look at it.
#[derive(Debug, Clone)]
pub struct Received {
    pub service: String,
    pub name: String,
    /// OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    pub kind: i32,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// `trace_id-span_id` of each link.
    pub links: Vec<String>,
    pub attributes: Vec<(String, String)>,
}

impl Received {
    /// A text, boolean or number attribute, printed.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The receiver: its base URL for `--otel-endpoint`, and the spans it was sent.
pub struct OtlpReceiver {
    pub endpoint: String,
    spans: Receiver<Received>,
}

/// Starts a receiver on a free loopback port.
pub fn receiver() -> OtlpReceiver {
    http_receiver(None)
}

/// Starts a receiver that speaks HTTPS with `tls` (see [`Pki`]).
pub fn https_receiver(tls: Arc<rustls::ServerConfig>) -> OtlpReceiver {
    http_receiver(Some(tls))
}

fn http_receiver(tls: Option<Arc<rustls::ServerConfig>>) -> OtlpReceiver {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let endpoint = format!("{scheme}://{}", listener.local_addr().unwrap());
    let (tx, spans) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let tx = tx.clone();
            let tls = tls.clone();
            std::thread::spawn(move || match tls {
                None => serve(stream, tx),
                Some(config) => {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    serve(rustls::StreamOwned::new(conn, stream), tx)
                }
            });
        }
    });
    OtlpReceiver { endpoint, spans }
}

/// A private CA with a server certificate for 127.0.0.1 and a client certificate, as
/// PEM files in a temporary directory, and the receivers' TLS configurations.
pub struct Pki {
    pub dir: tempfile::TempDir,
    pub ca_file: std::path::PathBuf,
    pub client_cert_file: std::path::PathBuf,
    pub client_key_file: std::path::PathBuf,
    ca_pem: String,
    server_cert_pem: String,
    server_key_pem: String,
}

impl Pki {
    pub fn new() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca.self_signed(&ca_key).unwrap();
        let server_key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .unwrap()
            .signed_by(&server_key, &ca, &ca_key)
            .unwrap();
        let client_key = KeyPair::generate().unwrap();
        let client = CertificateParams::new(vec!["camel-client".into()])
            .unwrap()
            .signed_by(&client_key, &ca, &ca_key)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        Pki {
            ca_file: write("ca.pem", &ca.pem()),
            client_cert_file: write("client.pem", &client.pem()),
            client_key_file: write("client.key", &client_key.serialize_pem()),
            ca_pem: ca.pem(),
            server_cert_pem: server.pem(),
            server_key_pem: server_key.serialize_pem(),
            dir,
        }
    }

    /// The receiver's configuration; `client_auth`: it refuses a client without a
    /// certificate of the CA. `alpn`: the protocols it offers (`h2` for gRPC).
    pub fn server(&self, client_auth: bool, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap();
        let builder = if client_auth {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(self.ca_pem.as_bytes()).unwrap())
                .unwrap();
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .unwrap();
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder
            .with_single_cert(
                vec![CertificateDer::from_pem_slice(self.server_cert_pem.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(self.server_key_pem.as_bytes()).unwrap(),
            )
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }
}

impl OtlpReceiver {
    /// Spans until `done` says the collection is complete (or 30 s passed, and the test
    /// sees what came).
    pub fn collect(&self, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got = Vec::new();
        while !done(&got) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.spans.recv_timeout(left) {
                Ok(span) => got.push(span),
                Err(_) => break,
            }
        }
        got
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn printed(value: Option<&AnyValue>) -> String {
    match value {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn received(service: &str, span: Span) -> Received {
    Received {
        service: service.to_string(),
        name: span.name,
        kind: span.kind,
        trace_id: hex(&span.trace_id),
        span_id: hex(&span.span_id),
        parent_span_id: hex(&span.parent_span_id),
        links: span
            .links
            .iter()
            .map(|l| format!("{}-{}", hex(&l.trace_id), hex(&l.span_id)))
            .collect(),
        attributes: span
            .attributes
            .into_iter()
            .map(|kv| {
                let value = kv.value.and_then(|v| v.value);
                (kv.key, printed(value.as_ref()))
            })
            .collect(),
    }
}

/// Answers the requests of one connection (the exporter keeps it alive).
fn serve(stream: impl Read + Write, tx: Sender<Received>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut first = true;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if first {
                assert!(line.starts_with("POST /v1/traces "), "{line}");
                first = false;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        forward(&body, &tx);
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        let writer = reader.get_mut();
        if writer
            .write_all(answer.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Decodes an `ExportTraceServiceRequest` and hands its spans to the test.
fn forward(body: &[u8], tx: &Sender<Received>) {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP/protobuf body");
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| printed(kv.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                let _ = tx.send(received(&service, span));
            }
        }
    }
}

/// Starts an OTLP/gRPC receiver (HTTP/2 without TLS) on a free loopback port: each
/// `TraceService/Export` call's spans reach the test; every call is answered OK.
pub fn grpc_receiver() -> OtlpReceiver {
    grpc_receiver_with(None)
}

/// The same over TLS with `tls` (which must offer ALPN `h2`).
pub fn grpc_tls_receiver(tls: Arc<rustls::ServerConfig>) -> OtlpReceiver {
    grpc_receiver_with(Some(tls))
}

fn grpc_receiver_with(tls: Option<Arc<rustls::ServerConfig>>) -> OtlpReceiver {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let endpoint = format!("{scheme}://{}", listener.local_addr().unwrap());
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let (tx, spans) = channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((socket, _)) = listener.accept().await {
                let tx = tx.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => serve_h2(socket, tx).await,
                        Some(acceptor) => {
                            if let Ok(socket) = acceptor.accept(socket).await {
                                serve_h2(socket, tx).await;
                            }
                        }
                    }
                });
            }
        });
    });
    OtlpReceiver { endpoint, spans }
}

async fn serve_h2(
    socket: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    tx: Sender<Received>,
) {
    let Ok(mut conn) = h2::server::handshake(socket).await else {
        return;
    };
    while let Some(Ok((request, respond))) = conn.accept().await {
        let tx = tx.clone();
        tokio::spawn(answer_grpc(request, respond, tx));
    }
}

async fn answer_grpc(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<bytes::Bytes>,
    tx: Sender<Received>,
) {
    assert_eq!(
        request.uri().path(),
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
    );
    let mut body = request.into_body();
    let mut data = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    // A gRPC message: a compression flag, a 4-byte big-endian length, the protobuf.
    assert!(
        data.len() >= 5 && data[0] == 0,
        "an uncompressed gRPC message"
    );
    let length = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    forward(&data[5..5 + length], &tx);
    let response = http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
    let Ok(mut send) = respond.send_response(response, false) else {
        return;
    };
    // An empty ExportTraceServiceResponse, then the status in the trailers.
    let _ = send.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), false);
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let _ = send.send_trailers(trailers);
}
