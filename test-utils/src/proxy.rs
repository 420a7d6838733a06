//! A fault-injecting HTTP/1.1 proxy on loopback, between the client and Azurite.
//!
//! Each request the client sends draws from a seeded schedule: most are forwarded as they are; at the chosen
//! rate one of the faults below happens instead. The schedule is a fixed function of the seed and the order in
//! which requests arrive, so a failing run can be replayed with its seed (concurrency can reorder arrivals;
//! the seed is printed with every failure).
//!
//! The proxy reads requests with a `Content-Length` body (what the client sends) and responses with a
//! `Content-Length` or chunked body (what Azurite sends), and opens one upstream connection per request.
//!
//! Layer: base.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the proxy does to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Forwards the request and the response.
    None,
    /// Closes the client's connection before forwarding: nothing reaches the service.
    CloseBeforeForwarding,
    /// Forwards the request, then closes the client's connection before answering: the write landed, the
    /// reply is lost.
    CloseAfterForwarding,
    /// Answers `503 ServerBusy` with `Retry-After: 1` without forwarding.
    ServerBusy,
    /// Forwards the request, then answers `500 OperationTimedOut` instead of the service's answer.
    OperationTimedOut,
    /// Forwards the request and holds the answer past the client's per-try timeout.
    Delay,
}

const FAULTS: [Fault; 5] = [
    Fault::CloseBeforeForwarding,
    Fault::CloseAfterForwarding,
    Fault::ServerBusy,
    Fault::OperationTimedOut,
    Fault::Delay,
];

/// SplitMix64: a tiny, well-known generator whose whole state is the seed, so a schedule replays exactly.
#[derive(Debug)]
struct Schedule {
    /// Faults to apply first, in order, before the seeded draws.
    script: Mutex<std::collections::VecDeque<Fault>>,
    state: AtomicU64,
    /// Faults per 1,000 requests.
    per_mille: u64,
    delay: Duration,
    /// When set, the primary location is down: every request not for the account's secondary location
    /// (path-style, `/<account>-secondary/...`) meets this fault, and the others are forwarded.
    primary_down: Option<Fault>,
}

impl Schedule {
    /// The fault for a request with this request line.
    fn next_for(&self, line: &str) -> Fault {
        match self.primary_down {
            Some(fault) => {
                let path = line.split(' ').nth(1).unwrap_or("");
                let first = path.trim_start_matches('/').split(['/', '?']).next().unwrap_or("");
                if first.ends_with("-secondary") {
                    Fault::None
                } else {
                    fault
                }
            }
            None => self.next(),
        }
    }

    fn next(&self) -> Fault {
        if let Some(fault) = self.script.lock().expect("not poisoned").pop_front() {
            return fault;
        }
        let mut z = self.state.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if z % 1000 < self.per_mille {
            FAULTS[((z >> 20) % FAULTS.len() as u64) as usize]
        } else {
            Fault::None
        }
    }
}

/// A running proxy. It stops when dropped.
pub struct Proxy {
    /// Where the proxy listens: `127.0.0.1` and a port of its own.
    pub addr: SocketAddr,
    counts: Arc<Mutex<Counts>>,
    task: JoinHandle<()>,
}

/// What the proxy saw: requests per fault, per method, and each request's line (`GET /path?query HTTP/1.1`).
#[derive(Debug, Default)]
struct Counts {
    faults: BTreeMap<Fault, u64>,
    methods: BTreeMap<String, u64>,
    lines: Vec<String>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy to `upstream` that injects a fault into `per_mille` of 1,000 requests, drawn from `seed`;
    /// a [`Fault::Delay`] holds the answer for `delay`.
    pub async fn start(upstream: SocketAddr, seed: u64, per_mille: u64, delay: Duration) -> Proxy {
        Proxy::scripted(upstream, Vec::new(), seed, per_mille, delay).await
    }

    /// A proxy that applies `script` to the first requests, in order, then draws as [`Proxy::start`] does.
    pub async fn scripted(
        upstream: SocketAddr,
        script: Vec<Fault>,
        seed: u64,
        per_mille: u64,
        delay: Duration,
    ) -> Proxy {
        let script = Mutex::new(script.into());
        let state = AtomicU64::new(seed);
        let schedule = Schedule { script, state, per_mille, delay, primary_down: None };
        Proxy::with_schedule_to(upstream, schedule).await
    }

    /// A proxy in front of a path-style account whose primary location is down: every request but those for
    /// the secondary location (`/<account>-secondary/...`) meets `fault`; those are forwarded.
    pub async fn primary_down(upstream: SocketAddr, fault: Fault) -> Proxy {
        let script = Mutex::new(Default::default());
        let state = AtomicU64::new(0);
        let schedule = Schedule { script, state, per_mille: 0, delay: Duration::ZERO, primary_down: Some(fault) };
        Proxy::with_schedule_to(upstream, schedule).await
    }

    async fn with_schedule_to(upstream: SocketAddr, schedule: Schedule) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let addr = listener.local_addr().expect("bound");
        let schedule = Arc::new(schedule);
        let counts = Arc::new(Mutex::new(Counts::default()));
        let task_counts = counts.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (schedule, counts) = (schedule.clone(), task_counts.clone());
                tokio::spawn(async move {
                    let _ = serve(client, upstream, &schedule, &counts).await;
                });
            }
        });
        Proxy { addr, counts, task }
    }

    /// How many requests met each fault so far.
    pub fn counts(&self) -> BTreeMap<Fault, u64> {
        self.counts.lock().expect("not poisoned").faults.clone()
    }

    /// How many requests of each method (`GET`, `POST`, ...) arrived so far, whatever their fault.
    pub fn methods(&self) -> BTreeMap<String, u64> {
        self.counts.lock().expect("not poisoned").methods.clone()
    }

    /// The request line of every request so far, in the order they arrived.
    pub fn lines(&self) -> Vec<String> {
        self.counts.lock().expect("not poisoned").lines.clone()
    }
}

/// One message: the head (start line and headers, as received) and the body.
struct Message {
    head: String,
    body: Vec<u8>,
}

/// Serves one client connection: request after request, until it closes or a fault closes it.
async fn serve(
    client: TcpStream,
    upstream: SocketAddr,
    schedule: &Schedule,
    counts: &Mutex<Counts>,
) -> std::io::Result<()> {
    let mut client = BufReader::new(client);
    while let Some(request) = read_message(&mut client, true).await? {
        let line = request.head.split("\r\n").next().unwrap_or("").to_owned();
        let fault = schedule.next_for(&line);
        let method = line.split(' ').next().unwrap_or("").to_owned();
        {
            let mut counts = counts.lock().expect("not poisoned");
            *counts.faults.entry(fault).or_insert(0) += 1;
            *counts.methods.entry(method).or_insert(0) += 1;
            counts.lines.push(line);
        }
        match fault {
            Fault::CloseBeforeForwarding => return Ok(()),
            Fault::ServerBusy => {
                let body = br#"{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy."}}}"#;
                let head = "HTTP/1.1 503 Server Busy\r\nx-ms-error-code: ServerBusy\r\nRetry-After: 1\r\n\
                            Content-Type: application/json\r\n";
                write_message(client.get_mut(), head, body).await?;
                continue;
            }
            _ => {}
        }
        let response = forward(upstream, &request).await?;
        match fault {
            Fault::CloseAfterForwarding => return Ok(()),
            Fault::OperationTimedOut => {
                let body = br#"{"odata.error":{"code":"OperationTimedOut","message":{"lang":"en-US","value":"Operation could not be completed within the specified time."}}}"#;
                let head = "HTTP/1.1 500 Operation Timed Out\r\nx-ms-error-code: OperationTimedOut\r\n\
                            Content-Type: application/json\r\n";
                write_message(client.get_mut(), head, body).await?;
            }
            Fault::Delay => {
                tokio::time::sleep(schedule.delay).await;
                write_message(client.get_mut(), &strip_framing(&response.head), &response.body).await?;
            }
            _ => write_message(client.get_mut(), &strip_framing(&response.head), &response.body).await?,
        }
    }
    Ok(())
}

/// Sends a request on a new upstream connection and reads the whole response.
async fn forward(upstream: SocketAddr, request: &Message) -> std::io::Result<Message> {
    let mut stream = BufReader::new(TcpStream::connect(upstream).await?);
    let mut head = strip_framing(&request.head);
    head.push_str("Connection: close\r\n");
    write_message(stream.get_mut(), &head, &request.body).await?;
    read_message(&mut stream, false)
        .await?
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no response from upstream"))
}

/// The head without its body framing headers and final blank line: `Content-Length` and
/// `Transfer-Encoding` are written again for the body as it is sent on, and the hop-by-hop `Connection` and
/// `Keep-Alive` are the proxy's own on each side.
fn strip_framing(head: &str) -> String {
    let mut out = String::new();
    for line in head.split("\r\n").filter(|l| !l.is_empty()) {
        let lower = line.to_ascii_lowercase();
        let hop_by_hop = ["content-length:", "transfer-encoding:", "connection:", "keep-alive:"];
        if hop_by_hop.iter().any(|h| lower.starts_with(h)) {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out
}

/// Writes a head (ending in `\r\n`, without the blank line) with a `Content-Length`, then the body.
async fn write_message(stream: &mut TcpStream, head: &str, body: &[u8]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(head.len() + body.len() + 32);
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    bytes.extend_from_slice(body);
    stream.write_all(&bytes).await?;
    stream.flush().await
}

/// Reads one message; `None` when the connection is closed before a new one starts.
async fn read_message(stream: &mut BufReader<TcpStream>, is_request: bool) -> std::io::Result<Option<Message>> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "message cut short"))
            };
        }
        let end = line == "\r\n";
        head.push_str(&line);
        if end {
            break;
        }
    }
    let header = |name: &str| {
        head.split("\r\n").find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    let mut body = Vec::new();
    if let Some(length) = header("content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad Content-Length"))?;
        body.resize(length, 0);
        stream.read_exact(&mut body).await?;
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            stream.read_line(&mut size).await?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| invalid("bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).await?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if !is_request {
        stream.read_to_end(&mut body).await?;
    }
    Ok(Some(Message { head, body }))
}

fn invalid(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_owned())
}
