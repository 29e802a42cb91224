//! What the keeper's integration tests share: the pinned anvil, the contracts compiled once, a
//! funded world whose chain time never follows the wall clock, anvil's control methods, feed
//! helpers, hang guards, and real loopback servers (a scripted OpenAI-compatible server, over
//! HTTP or TLS; a throw-away CA; a TLS-terminating proxy). No part of the keeper is mocked.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
};
use keeper::{
    dev::world::World,
    kit::anvil::Anvil,
    kit::bindings::IRiskGate,
    kit::compile::{self, Artifacts},
    record::{feed, FeedRow},
};
use std::{
    future::Future,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard, OnceLock},
    time::{Duration, Instant},
};
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_rustls::{
    rustls::{
        self,
        pki_types::{CertificateDer, PrivateKeyDer},
    },
    TlsAcceptor,
};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn anvil_bin() -> PathBuf {
    root().join(".toolchain/bin/anvil")
}

/// One test at a time inside a test binary, so the suite stays light on a 2-core machine.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn artifacts() -> Artifacts {
    static ART: OnceLock<Artifacts> = OnceLock::new();
    ART.get_or_init(|| compile::compile(&root()).expect("contracts/src compiles with tools/solc"))
        .clone()
}

/// Deploys another gate beside `w`'s, on the same collateral and factory, trusting the maker as
/// resolver and creator, with the keeper as its keeper and `attestors` as its mode.
pub async fn deploy_beside(
    w: &World,
    attestors: IRiskGate::Attestors,
) -> keeper::commands::deploy::Deployment {
    let spec = keeper::commands::deploy::GateSpec {
        params: params(),
        trusted_resolvers: vec![w.maker_addr],
        trusted_creators: vec![w.maker_addr],
        collateral: Some(w.deployment.collateral),
        factory: Some(w.deployment.factory),
        keeper: w.keeper_addr,
        attestors,
        verdict_source: alloy::primitives::Address::ZERO,
    };
    keeper::commands::deploy::deploy_all(&w.keeper_rpc, w.deployment.chain_id, &artifacts(), &spec)
        .await
        .expect("the gate deploys")
}

/// `submitVerdict` on `gate`, called as the keeper, reverts `WrongGateMode(mode)`: the keeper
/// cannot go around an attested gate's attestors or a consensus gate's source.
pub async fn assert_submit_verdict_refused(
    w: &World,
    gate: alloy::primitives::Address,
    mode: IRiskGate::GateMode,
) {
    use alloy::primitives::Address;
    let g = IRiskGate::new(gate, &w.keeper_rpc);
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let quote = IRiskGate::Quote { maxPricePaid: U256::ZERO, deadline: 0 };
    let err = g
        .submitVerdict(Address::ZERO, "ABSTAIN".into(), Default::default(), head, quote)
        .call()
        .await
        .unwrap_err();
    let decoded = err.as_decoded_interface_error::<IRiskGate::IRiskGateErrors>();
    assert!(
        matches!(decoded, Some(IRiskGate::IRiskGateErrors::WrongGateMode(ref e)) if e.mode == mode),
        "{err}"
    );
}

/// The attested mode the tests deploy: `signers` (sorted here, as the constructor requires),
/// threshold `k`, reads at most 5 blocks old, 200 bps over the attested price.
pub fn attested(mut signers: Vec<alloy::primitives::Address>, k: u8) -> IRiskGate::Attestors {
    signers.sort();
    IRiskGate::Attestors { signers, threshold: k, maxReadAge: 5, maxSlippageBps: 200 }
}

pub fn params() -> IRiskGate::Params {
    IRiskGate::Params {
        minPrice: U256::from(50_000u64),
        maxPrice: U256::from(950_000u64),
        maxSize: U256::from(10_000_000u64),
        minHeadroom: 600,
        maxConcurrent: 10,
        maxNotional: U256::from(1_000_000_000u64),
        maxHorizon: 604_800,
        maxDrawdown: U256::from(1_000_000_000u64),
        writeOffGrace: 3_600,
        minFillBps: 2_500,
    }
}

/// How long a test waits for something that must happen (a file written, a child process
/// exiting, a transaction reaching the pool) before it fails saying what did not happen. A
/// guard against a hang on a loaded machine, never an outcome: nothing asserted depends on it.
pub const HANG_GUARD: Duration = Duration::from_secs(120);

/// One of anvil's control methods (`evm_*`, `anvil_*`) on `p`, its result as JSON.
pub async fn anvil_rpc(
    p: &DynProvider,
    method: &'static str,
    params: serde_json::Value,
) -> serde_json::Value {
    p.raw_request(method.into(), params).await.unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// Mines one block now (with whatever the pool holds).
pub async fn mine(p: &DynProvider) {
    anvil_rpc(p, "evm_mine", serde_json::json!([])).await;
}

/// Turns anvil's automine (a block per transaction, as it arrives) off or on.
pub async fn automine(p: &DynProvider, on: bool) {
    anvil_rpc(p, "evm_setAutomine", serde_json::json!([on])).await;
}

/// Makes every later block exactly 1 s after the one before it, whenever it is mined, so chain
/// time is a count of blocks and the wall clock (a slow machine, a long build next door) never
/// leaks into it. `evm_setNextBlockTimestamp` (`World::mine_at`) still sets one block's time;
/// anvil 1.7.1 ignores `evm_increaseTime` (`World::advance`) while this is on. Not kept across
/// an anvil restart: pin the new node again.
pub async fn pin_block_time(p: &DynProvider) {
    anvil_rpc(p, "anvil_setBlockTimestampInterval", serde_json::json!([1])).await;
}

/// A fresh anvil with the gate deployed and funded, its chain time pinned ([`pin_block_time`]).
pub async fn world(extra: &[String]) -> World {
    let anvil = Anvil::start(&anvil_bin(), None, extra).await.expect("anvil starts");
    let w = World::deploy_on(anvil, artifacts(), &params()).await.expect("deploys");
    pin_block_time(&w.keeper_rpc).await;
    w.mint(w.deployment.gate, U256::from(100_000_000u64)).await.expect("funds the gate");
    w
}

pub fn decisions(rows: &[FeedRow]) -> Vec<&feed::DecisionRow> {
    rows.iter().filter_map(|r| if let FeedRow::Decision(d) = r { Some(d) } else { None }).collect()
}

pub fn offchain(rows: &[FeedRow]) -> Vec<&feed::OffchainRow> {
    rows.iter().filter_map(|r| if let FeedRow::Offchain(o) = r { Some(o) } else { None }).collect()
}

// --- a scripted OpenAI-compatible server

/// One canned HTTP response.
#[derive(Debug, Clone)]
pub struct Canned {
    pub status: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Canned {
    /// A 200 chat completion whose first choice carries `message`.
    pub fn message(message: serde_json::Value) -> Self {
        let body = serde_json::json!({
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        });
        Self { status: "200 OK", headers: Vec::new(), body: body.to_string() }
    }

    /// A 200 chat completion whose answer is the text `content`.
    pub fn content(content: &str) -> Self {
        Self::message(serde_json::json!({"role": "assistant", "content": content}))
    }

    pub fn status(status: &'static str, body: &str) -> Self {
        Self { status, headers: Vec::new(), body: body.to_string() }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_string()));
        self
    }
}

/// One request the server answered, timed by the server's own clock.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// When the whole request had been read.
    pub arrived: Instant,
    /// When the response had been written.
    pub answered: Instant,
    pub request_body: String,
}

pub struct Served {
    pub url: String,
    pub log: Arc<Mutex<Vec<Exchange>>>,
}

impl Served {
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Serves `script[n]` to the n-th connection (every response closes its connection, so one
/// request is one connection), over TLS when `tls` is given. Past the script: 500.
pub async fn serve_inference(script: Vec<Canned>, tls: Option<TlsAcceptor>) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let log = Arc::new(Mutex::new(Vec::new()));
    let served_log = log.clone();
    tokio::spawn(async move {
        let mut n = 0usize;
        loop {
            let Ok((sock, _)) = listener.accept().await else { return };
            // The request is read here, in arrival order, so a `GET /v1/models` (the keeper
            // asks once at start what the server serves) is answered 404, as by a server that
            // describes nothing, without taking a scripted reply.
            match &tls {
                Some(acceptor) => {
                    let Ok(stream) = acceptor.accept(sock).await else { continue };
                    route(stream, &script, &mut n, &log).await;
                }
                None => route(sock, &script, &mut n, &log).await,
            }
        }
    });
    Served { url: format!("{scheme}://{addr}"), log: served_log }
}

/// Reads one request from `sock`: a `GET` is answered 404 (see [`not_found`]); anything else
/// takes scripted reply `n` (HTTP 500 once the script is used up), answered on its own task.
async fn route<S>(mut sock: S, script: &[Canned], n: &mut usize, log: &Arc<Mutex<Vec<Exchange>>>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some((line, body)) = read_request_line(&mut sock).await else { return };
    if line.starts_with("GET ") {
        tokio::spawn(not_found(sock));
        return;
    }
    let reply = script.get(*n).cloned().unwrap_or(Canned::status("500 Internal", "{}"));
    *n += 1;
    tokio::spawn(answer(sock, body, reply, log.clone()));
}

/// What a server that describes none of its models answers to `GET /v1/models` (the keeper
/// asks once at start).
pub async fn not_found<S: AsyncWrite + Unpin>(mut sock: S) {
    write_canned(&mut sock, &Canned::status("404 Not Found", "{\"error\":\"not found\"}")).await;
    let _ = sock.shutdown().await;
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    request_body: String,
    reply: Canned,
    log: Arc<Mutex<Vec<Exchange>>>,
) {
    let arrived = Instant::now();
    write_canned(&mut sock, &reply).await;
    let answered = Instant::now();
    log.lock().unwrap_or_else(|e| e.into_inner()).push(Exchange {
        arrived,
        answered,
        request_body,
    });
    let _ = sock.shutdown().await;
}

/// Reads one HTTP request whole and returns its body; `None` when the client closed the
/// connection first.
pub async fn read_request<S: AsyncRead + Unpin>(sock: &mut S) -> Option<String> {
    read_request_line(sock).await.map(|(_, body)| body)
}

/// Reads one HTTP request whole (headers, then a `Content-Length` body) and returns its request
/// line and its body; `None` when the client closed the connection first.
pub async fn read_request_line<S: AsyncRead + Unpin>(sock: &mut S) -> Option<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let body_start = loop {
        let k = sock.read(&mut chunk).await.ok()?;
        if k == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..k]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0usize);
            if buf.len() >= end + 4 + len {
                break end + 4;
            }
        }
    };
    let head = String::from_utf8_lossy(&buf[..body_start]);
    let line = head.lines().next().unwrap_or("").to_string();
    Some((line, String::from_utf8_lossy(&buf[body_start..]).to_string()))
}

/// Writes `reply` as a whole HTTP response that closes its connection.
pub async fn write_canned<S: AsyncWrite + Unpin>(sock: &mut S, reply: &Canned) {
    let mut head = format!("HTTP/1.1 {}\r\ncontent-type: application/json\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", reply.body.len()));
    let _ = sock.write_all(head.as_bytes()).await;
    let _ = sock.write_all(reply.body.as_bytes()).await;
    let _ = sock.flush().await;
}

// --- TLS on loopback

/// A throw-away CA and a leaf certificate for `localhost` and 127.0.0.1 signed by it.
pub struct TestPki {
    /// The CA certificate, PEM: what a client trusts through SSL_CERT_FILE.
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

pub fn test_pki() -> TestPki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "riskgate keeper test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca_cert.der().clone()];
    let key: PrivateKeyDer<'static> = leaf_key.into();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    TestPki { ca_pem: ca_cert.pem(), acceptor: TlsAcceptor::from(Arc::new(config)) }
}

/// A TLS-terminating proxy on 127.0.0.1 in front of the plain-HTTP `upstream` (host:port).
/// Returns the port it listens on.
pub async fn tls_proxy(acceptor: TlsAcceptor, upstream: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else { return };
            let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else { return };
                let Ok(mut plain) = TcpStream::connect(&upstream).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

/// Polls until `f` holds, up to `max` (a guard against a hang, never an outcome).
pub async fn eventually(max: Duration, mut f: impl FnMut() -> bool) -> bool {
    eventually_async(max, || std::future::ready(f())).await
}

/// [`eventually`] for a condition that needs the network (a node, a server) to answer.
pub async fn eventually_async<F: Future<Output = bool>>(
    max: Duration,
    mut f: impl FnMut() -> F,
) -> bool {
    let start = Instant::now();
    while start.elapsed() < max {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f().await
}

/// `n` markets a day out (inside maxHorizon) whose only book is an ask at 0.52: the builtin
/// model answers ABSTAIN, a row that buys nothing and so is final once confirmed.
#[allow(dead_code)]
pub async fn abstain_markets(w: &World, n: usize) {
    let expiry = w.chain_time().await.unwrap() + 86_400;
    for _ in 0..n {
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, 520_000, 1_000_000).await.unwrap();
    }
}

/// A market a day out whose only book is an ask at 0.40 for 20 units: the builtin model answers
/// BUY_UP, which the gate passes (0.40 is inside [0.05, 0.95], the position caps are far).
pub async fn buy_up_market(w: &World) -> alloy::primitives::Address {
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m, 400_000, 20_000_000).await.unwrap();
    m
}

/// One cycle with the builtin model, never cancelled.
pub async fn builtin_cycle(k: &mut keeper::engine::Engine) -> keeper::engine::CycleReport {
    k.set_model(keeper::inference::Model::Builtin);
    k.cycle(None, &tokio_util::sync::CancellationToken::new()).await.unwrap()
}

/// Spawns `cmd`, a keeper server (`serve`, `attest`), with its output piped and killed when
/// dropped, and waits (at most [`HANG_GUARD`]) for the line `<announces>http://addr/` it prints
/// once listening: the child, the base URL without its trailing slash, and its stderr.
pub async fn spawn_listening(
    mut cmd: tokio::process::Command,
    announces: &str,
) -> (tokio::process::Child, String, Drained) {
    use tokio::io::AsyncBufReadExt;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{announces:?} does not start: {e}"));
    let log = Drained::new(&mut child);
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(HANG_GUARD, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix(announces) {
                return Some(url.trim_end_matches('/').to_string());
            }
        }
        None
    })
    .await
    .ok()
    .flatten();
    let Some(url) = url else {
        panic!("no {announces:?} line was printed; it logged:\n{}", log.text());
    };
    (child, url, log)
}

/// A child's stderr, read into memory as it is written (a pipe nobody reads would stall the
/// child once full), so a test can wait on what it logs.
pub struct Drained {
    log: Arc<Mutex<Vec<u8>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drained {
    pub fn new(child: &mut tokio::process::Child) -> Self {
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = log.clone();
        let task = tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                sink.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        Self { log, task }
    }

    /// A drain of nothing (what is left once a drain was taken).
    pub fn empty() -> Self {
        Self { log: Arc::new(Mutex::new(Vec::new())), task: tokio::spawn(async {}) }
    }

    /// Bytes logged so far.
    pub fn len(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap()).to_string()
    }

    /// Whether `what` was logged after the first `from` bytes.
    pub fn logged_since(&self, from: usize, what: &str) -> bool {
        String::from_utf8_lossy(&self.log.lock().unwrap()[from..]).contains(what)
    }

    /// Waits for the child to close its stderr (it exited) and returns all it logged.
    pub async fn finish(self) -> String {
        self.task.await.unwrap();
        String::from_utf8_lossy(&self.log.lock().unwrap()).to_string()
    }
}

/// The whole record a keeper holds in `dir` up to its confirmed block, the feed's rows, read
/// from `state.sqlite` as a viewer would.
pub fn record_rows(dir: &std::path::Path) -> Vec<FeedRow> {
    let mut rows = keeper::record::store::Store::open_read(dir)
        .expect("the state database opens")
        .expect("the keeper wrote a state database")
        .rows()
        .expect("its rows decode");
    // A decision as the pages show it: with the rows closing its position attached.
    feed::attach_closings(&mut rows);
    rows
}

/// What a JSON-RPC proxy does with one request: answer it itself, or forward it and pass the
/// node's answer through `rewrite`.
pub type RpcHook = Arc<dyn Fn(&serde_json::Value) -> Option<serde_json::Value> + Send + Sync>;
pub type RpcRewrite =
    Arc<dyn Fn(&serde_json::Value, serde_json::Value) -> serde_json::Value + Send + Sync>;

/// What a proxy does with a whole HTTP request before reading its JSON-RPC requests:
/// `Some((status, content_type, body))` answers it so, as a node or a gateway in front of one
/// does (a JSON-RPC error answer, an HTTP error status with a plain-text body, a 200 whose body
/// is not JSON).
pub type HttpHook =
    Arc<dyn Fn(&serde_json::Value) -> Option<(u16, &'static str, String)> + Send + Sync>;

/// A JSON-RPC proxy on 127.0.0.1 in front of `upstream` (a real node's http URL). Each request
/// (each item of a batch) goes to `hook` first: `Some(answer)` is sent back instead of asking the
/// node; otherwise the node answers and `rewrite(request, answer)` is what the client gets.
/// It stands in for what a real node here cannot be made to do on demand: a hosted provider's
/// range limits, or another node implementation's answers. Returns its URL.
#[allow(dead_code)]
pub async fn rpc_proxy(upstream: String, hook: RpcHook, rewrite: RpcRewrite) -> String {
    rpc_proxy_http(upstream, Arc::new(|_: &serde_json::Value| None), hook, rewrite).await
}

/// [`rpc_proxy`] that first shows each HTTP request's body (the JSON-RPC request or batch) to
/// `http`, which may answer the whole request itself at the HTTP level ([`HttpHook`]).
pub async fn rpc_proxy_http(
    upstream: String,
    http: HttpHook,
    hook: RpcHook,
    rewrite: RpcRewrite,
) -> String {
    use axum::{
        body::Bytes,
        extract::State,
        http::StatusCode,
        response::{IntoResponse, Response},
        routing::post,
        Router,
    };
    type Shared = (String, HttpHook, RpcHook, RpcRewrite, reqwest::Client);
    async fn one(s: &Shared, req: serde_json::Value) -> serde_json::Value {
        if let Some(answer) = (s.2)(&req) {
            return answer;
        }
        let answer: serde_json::Value = match s.4.post(&s.0).json(&req).send().await {
            Ok(r) => r.json().await.unwrap_or(serde_json::Value::Null),
            Err(_) => serde_json::Value::Null,
        };
        (s.3)(&req, answer)
    }
    async fn handle(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        if let Some((status, content_type, body)) = (s.1)(&req) {
            let status = StatusCode::from_u16(status).expect("a valid HTTP status");
            return (status, [("content-type", content_type)], body).into_response();
        }
        let out = match req {
            serde_json::Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(one(&s, item).await);
                }
                serde_json::Value::Array(out)
            }
            single => one(&s, single).await,
        };
        axum::Json(out).into_response()
    }
    let shared: Arc<Shared> = Arc::new((upstream, http, hook, rewrite, reqwest::Client::new()));
    let app = Router::new().route("/", post(handle)).with_state(shared);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

/// The block span of an `eth_getLogs` request, if it is one with both bounds as numbers.
pub fn log_span(req: &serde_json::Value) -> Option<u64> {
    if req["method"] != "eth_getLogs" {
        return None;
    }
    let f = &req["params"][0];
    let n =
        |v: &serde_json::Value| u64::from_str_radix(v.as_str()?.trim_start_matches("0x"), 16).ok();
    Some(n(&f["toBlock"])? - n(&f["fromBlock"])? + 1)
}

/// The gate's decisions as the chain holds them, read independently of any keeper state.
pub async fn chain_record(w: &keeper::dev::world::World) -> keeper::record::feed::ChainRecord {
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    keeper::record::assemble::read_chain_record(
        &w.keeper_rpc,
        w.deployment.chain_id,
        w.deployment.gate,
        &[],
        w.deployment.deploy_block,
        head,
        5_000,
    )
    .await
    .unwrap()
}

/// Decisions per market.
pub fn per_market(
    record: &keeper::record::feed::ChainRecord,
) -> std::collections::BTreeMap<alloy::primitives::Address, usize> {
    let mut m = std::collections::BTreeMap::new();
    for d in &record.decided {
        *m.entry(d.market).or_insert(0) += 1;
    }
    m
}

/// The keeper binary (`--root` the repository unless `root` is given) signing as `w`'s keeper,
/// with no other KEEPER_* setting inherited from the environment.
pub fn keeper_bin(
    w: &keeper::dev::world::World,
    root_dir: Option<&Path>,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(root_dir.map_or_else(root, std::path::Path::to_path_buf));
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap()).kill_on_drop(true);
    cmd
}

/// A consensus gate beside `w`'s, on its collateral and factory: a one-validator source over
/// the stand-in platform first ([`deploy_source`]), at the address the gate is then created at.
/// Returns the gate and its source.
pub async fn consensus_beside(w: &World) -> (Address, Address) {
    use keeper::commands::deploy;
    // The source now (after its platform), the gate at the keeper's nonce after the source's.
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let gate_at = w.keeper_addr.create(nonce + 2);
    let source = deploy_source(w, gate_at, 1, &keeper::inference::prompt::system_text("")).await;
    let spec = deploy::GateSpec {
        params: params(),
        trusted_resolvers: vec![w.maker_addr],
        trusted_creators: vec![w.maker_addr],
        collateral: Some(w.deployment.collateral),
        factory: Some(w.deployment.factory),
        keeper: w.keeper_addr,
        attestors: IRiskGate::Attestors {
            signers: vec![],
            threshold: 0,
            maxReadAge: 5,
            maxSlippageBps: 200,
        },
        verdict_source: source,
    };
    let d = deploy::deploy_all(&w.keeper_rpc, w.deployment.chain_id, &artifacts(), &spec)
        .await
        .unwrap();
    assert_eq!(d.gate, gate_at, "the gate where its source expects it");
    (d.gate, source)
}

/// The stand-in platform with `n` validators (0.000…1 floor, price 7 wei each), and a verdict
/// source over it for `gate`, `n` of `n` identical answers, `system` as its system text; both
/// deployed by the keeper's account. Returns the source.
pub async fn deploy_source(w: &World, gate: Address, n: u8, system: &str) -> Address {
    use alloy::sol_types::SolValue;
    let art = artifacts();
    let validators: Vec<Address> = (1..=n).map(|i| Address::repeat_byte(0x0a + i)).collect();
    let (platform, _) = keeper::commands::deploy::create(
        &w.keeper_rpc,
        "stand-in platform",
        &art.somnia_standin.bytecode,
        (validators, U256::from(1u64), U256::from(7u64)).abi_encode_params(),
    )
    .await
    .unwrap();
    let settings = keeper::kit::bindings::ISomniaVerdictSource::Settings {
        gate,
        platform,
        agentId: U256::from(1u64),
        pricePerAgent: U256::from(7u64),
        subcommitteeSize: n,
        threshold: n,
        consensusType: 0,
        timeout: U256::from(60u64),
        askInterval: 10,
        maxReadAge: 5,
        maxSlippageBps: 200,
        system: system.to_string(),
    };
    let (source, _) = keeper::commands::deploy::create(
        &w.keeper_rpc,
        "verdict source",
        &art.somnia_source.bytecode,
        (settings,).abi_encode_params(),
    )
    .await
    .unwrap();
    source
}
