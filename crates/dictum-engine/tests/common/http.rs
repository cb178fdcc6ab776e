//! A small real HTTP/1.1 server on 127.0.0.1 for the network-policy tests: every request is
//! recorded (request line, headers), and a handler picks the answer: a whole body, a body
//! streamed in chunks with or without Content-Length (counting what was really written before
//! the client hung up), or a redirect. One response per connection (`Connection: close`).

#![allow(dead_code)]

use dictum_engine::llm::config::LlmConfig;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// As sent: a path, or an absolute URL when the client talks to a proxy.
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub enum Reply {
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `chunk` written `times` times; Content-Length sent only when `with_length`.
    Stream {
        chunk: Vec<u8>,
        times: usize,
        with_length: bool,
    },
}

impl Reply {
    pub fn json(body: &str) -> Reply {
        Reply::Full {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Location".into(), location.into())],
            body: vec![],
        }
    }
}

pub struct Server {
    pub base: String,
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Request>>>,
    /// Body bytes written by streamed replies before the client closed.
    pub streamed: Arc<AtomicU64>,
}

impl Server {
    pub fn hits(&self) -> Vec<Request> {
        self.requests.lock().expect("lock").clone()
    }

    pub fn streamed_bytes(&self) -> u64 {
        self.streamed.load(Ordering::SeqCst)
    }
}

/// An Ollama `/api/chat` answer with `content`.
pub fn ollama_chat(content: &str) -> String {
    serde_json::json!({
        "model": "m",
        "message": {"role": "assistant", "content": content},
        "done": true,
        "load_duration": 1_000_000u64,
        "eval_count": 5,
        "eval_duration": 50_000_000u64,
    })
    .to_string()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        404 => "Not Found",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        _ => "Status",
    }
}

pub async fn serve<F>(handler: F) -> Server
where
    F: Fn(&Request) -> Reply + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let streamed = Arc::new(AtomicU64::new(0));
    let handler = Arc::new(handler);
    let (reqs, sent) = (requests.clone(), streamed.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (reqs, sent, handler) = (reqs.clone(), sent.clone(), handler.clone());
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = vec![0u8; 65536];
                let head_end = loop {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i;
                    }
                };
                let head = String::from_utf8_lossy(&got[..head_end]).to_string();
                let mut lines = head.lines();
                let first = lines.next().unwrap_or_default().to_string();
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let target = parts.next().unwrap_or_default().to_string();
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .collect();
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                while got.len() < head_end + 4 + len {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                let req = Request {
                    method,
                    target,
                    headers,
                };
                reqs.lock().expect("lock").push(req.clone());
                match handler(&req) {
                    Reply::Full {
                        status,
                        headers,
                        body,
                    } => {
                        let mut h = format!(
                            "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                            reason(status),
                            body.len()
                        );
                        for (k, v) in headers {
                            h.push_str(&format!("{k}: {v}\r\n"));
                        }
                        h.push_str("\r\n");
                        let _ = sock.write_all(h.as_bytes()).await;
                        let _ = sock.write_all(&body).await;
                    }
                    Reply::Stream {
                        chunk,
                        times,
                        with_length,
                    } => {
                        let mut h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n".to_string();
                        if with_length {
                            h.push_str(&format!("Content-Length: {}\r\n", chunk.len() * times));
                        }
                        h.push_str("\r\n");
                        if sock.write_all(h.as_bytes()).await.is_err() {
                            return;
                        }
                        for _ in 0..times {
                            if sock.write_all(&chunk).await.is_err() {
                                return;
                            }
                            sent.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                        }
                    }
                }
                let _ = sock.flush().await;
            });
        }
    });
    Server {
        base: format!("http://127.0.0.1:{port}"),
        port,
        requests,
        streamed,
    }
}

/// An enabled LLM config (the default backend, model `m`, 5 s) pointing at `url`.
pub fn llm(url: &str) -> LlmConfig {
    LlmConfig {
        enabled: true,
        url: url.into(),
        model: "m".into(),
        timeout_ms: 5_000,
        ..LlmConfig::default()
    }
}
