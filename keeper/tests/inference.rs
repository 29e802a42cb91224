//! Inference on the wire: what a model answer becomes on chain, how a rate-limited server is
//! waited out, and HTTPS for both the model and the RPC through a test CA trusted via the
//! environment. Real anvil, real contracts, real loopback servers (plain and TLS); no mocks.
//! Time never decides an outcome: chain time is a count of blocks (`common::world`), the
//! timing assertion is a lower bound measured by the server's own clock (the keeper must not
//! retry earlier than `Retry-After` told it) with a 30 s ceiling far above the 1 s asked for,
//! and every answer is served on loopback far inside the 10 s inference timeout. A request the
//! server holds open is released by the test only after it has seen what it waits for, and
//! the keeper's inference timeout there is an hour, far past every hang guard.
// Each test runs on its own runtime; the std lock held across awaits is exactly what serialises
// them (no task inside one runtime ever contends for it).
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    primitives::Address,
    providers::{DynProvider, Provider},
    rpc::types::Filter,
    sol_types::SolEvent,
};
use common::{
    buy_up_market, decisions, eventually, eventually_async, not_found, offchain, read_request_line,
    root, serial, serve_inference, test_pki, tls_proxy, world, write_canned, Canned, Drained,
    HANG_GUARD,
};
use keeper::{
    chain::journal::{Journal, JOURNAL_FILE},
    commands::cli::InferenceOptions,
    dev::steps,
    inference::{openai::OpenAiClient, Model},
    kit::bindings::IRiskGate,
    record::feed,
};
use serde_json::json;
use std::{
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
    sync::watch,
};
use tokio_util::sync::CancellationToken;

fn openai(url: &str, timeout: Duration) -> Model {
    Model::OpenAi(
        OpenAiClient::new(url, "test-model", timeout, InferenceOptions::default()).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_that_arrived_is_submitted_verbatim_and_only_transport_failures_stay_off_chain(
) {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    // Seven books asking 0.40: a BUY_UP on any of them passes every rule (reason 0).
    for _ in 0..7 {
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, 400_000, 20_000_000).await.unwrap();
    }
    let tool_call = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "answer", "arguments": "{\"side\": \"up\"}"}}],
    });
    // Markets are asked in discovery order, one at a time (concurrency 1).
    let server = serve_inference(
        vec![
            Canned::content(""),
            Canned::message(tool_call),
            Canned::content("I would buy UP here."),
            Canned::content("{\"verdict\": \"BUY_UP\"}"),
            Canned::content("{\"verdict\":\"BUY_UP\",\"confidence\":0.9}"),
            Canned::status("500 Internal Server Error", "{\"error\":\"overloaded\"}"),
            Canned::status(
                "200 OK",
                "{\"choices\":[{\"index\":0,\"finish_reason\":\"content_filter\"}]}",
            ),
        ],
        None,
    )
    .await;
    let mut k = w.keeper(Some(dir.path().to_path_buf())).concurrency(1).build().unwrap();
    k.set_model(openai(&server.url, Duration::from_secs(10)));
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (7, 5, 2));

    // The request asked for the object schema by default.
    let first: serde_json::Value =
        serde_json::from_str(&server.exchanges()[0].request_body).unwrap();
    assert_eq!(first["response_format"]["json_schema"]["schema"]["type"], "object");
    assert_eq!(first["response_format"]["json_schema"]["strict"], true);

    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    let got: Vec<(Option<&str>, u8)> = ds.iter().map(|d| (d.raw.as_deref(), d.reason)).collect();
    // Reason 11 is the gate's "not one of the three verdicts"; the object's verdict string is
    // submitted alone and passes: ask 0.40 -> price 400000, quantity 10e6, cost 4e6.
    assert_eq!(
        got,
        vec![
            (Some(""), 11),
            (Some("{\"side\": \"up\"}"), 11),
            (Some("I would buy UP here."), 11),
            (Some("BUY_UP"), 0),
            (Some("{\"verdict\":\"BUY_UP\",\"confidence\":0.9}"), 11),
        ]
    );
    assert_eq!((ds[3].price_paid.as_str(), ds[3].cost.as_str()), ("400000", "4000000"));
    // How each answer arrived is recorded: the tool call's arguments say so.
    let arrivals: Vec<Option<&str>> = ds.iter().map(|d| d.note.arrival.as_deref()).collect();
    let content = Some("content");
    assert_eq!(arrivals, vec![content, Some("tool_call"), content, content, content]);
    // The canned server names no model: the row says so rather than repeating the flag alone.
    assert_eq!(ds[3].note.model.as_deref(), Some("test-model (the server named no model)"));

    let off = offchain(&rows);
    assert_eq!(off.len(), 2);
    assert_eq!(off[0].transport.http_status, Some(500));
    assert_eq!(off[0].transport.body.as_deref(), Some("{\"error\":\"overloaded\"}"));
    assert_eq!(off[0].transport.attempt, Some(1), "a 500 is not retried");
    assert!(off[0].error.contains("HTTP 500"), "{}", off[0].error);
    assert_eq!(off[1].transport.http_status, Some(200));
    assert_eq!(off[1].transport.finish_reason.as_deref(), Some("content_filter"));
    assert!(off[1].error.contains("no choices[0].message"), "{}", off[1].error);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out_as_the_server_says_and_bounded() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    for _ in 0..2 {
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, 400_000, 20_000_000).await.unwrap();
    }
    let busy = || Canned::status("503 Service Unavailable", "{\"error\":\"busy\"}");
    let server = serve_inference(
        vec![
            // First market: told to come back in 1 s, then answered.
            Canned::status("429 Too Many Requests", "{\"error\":\"slow down\"}")
                .header("retry-after", "1"),
            Canned::content("{\"verdict\":\"BUY_UP\"}"),
            // Second market: busy on every attempt, no Retry-After: backoff, then given up.
            busy(),
            busy(),
            busy(),
            busy(),
        ],
        None,
    )
    .await;
    let mut k = w.keeper(Some(dir.path().to_path_buf())).concurrency(1).build().unwrap();
    k.set_model(openai(&server.url, Duration::from_secs(10)));
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (2, 1, 1));

    let ex = server.exchanges();
    assert_eq!(ex.len(), 6, "1 + 1 retry for the first market, 4 attempts for the second");
    let waited = ex[1].arrived.duration_since(ex[0].answered);
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}, before Retry-After: 1");
    assert!(waited < Duration::from_secs(30), "a 1 s Retry-After took {waited:?}");

    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 1);
    assert_eq!((ds[0].raw.as_deref(), ds[0].reason), (Some("BUY_UP"), 0));
    let off = offchain(&rows);
    assert_eq!(off.len(), 1);
    assert_eq!((off[0].transport.http_status, off[0].transport.attempt), (Some(503), Some(4)));
    assert_eq!(off[0].transport.body.as_deref(), Some("{\"error\":\"busy\"}"));
    // The row says why the keeper stopped asking (MAX_ATTEMPTS = 4), not only the last status.
    assert!(off[0].error.contains("not retried after attempt 4: all 4 attempts were used"));
    w.stop().await;
}

/// Issue 32 (minor): the breaker and each market's backoff lived in memory only, so every
/// `--once` run (a restart) asked every due market again of a model that was down. They are
/// saved in the state database with each write. With `engine::health`'s defaults, 5 failures
/// in a row open the breaker for 300 chain seconds and each failed market backs off 60 s; the
/// restart comes a few blocks later (chain time is a count of blocks here), inside both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_and_each_markets_backoff_survive_a_restart() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..5 {
        buy_up_market(&w).await;
    }
    // Every scripted reply is an HTTP 500 (and so is anything past the script).
    let server = serve_inference(vec![], None).await;
    let start = |w: &keeper::dev::world::World| {
        let mut k =
            w.keeper(Some(dir.path().to_path_buf())).resume().concurrency(1).build().unwrap();
        k.set_model(openai(&server.url, Duration::from_secs(10)));
        k
    };
    let mut k = start(&w);
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!((r.asked, r.offchain_failures), (5, 5), "the fifth failure opens the breaker");
    drop(k);
    // A sixth market, due and never asked: after the restart the breaker holds it back.
    buy_up_market(&w).await;
    let mut k = start(&w);
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!(
        (r.asked, r.backing_off, r.held_back, r.offchain_failures),
        (0, 5, 1, 0),
        "the old keeper asked all 6 again"
    );
    assert_eq!(server.exchanges().len(), 5);
    w.stop().await;
}

/// Issue 32 (minor): a 429 whose `Retry-After` is longer than the keeper ever waits was
/// recorded as a bare "HTTP 429 (attempt 1)", as if the server were down. The quote lives 600 s
/// here, so the deadline is not what stops the retry: the 120 s asked for is over the 60 s the
/// keeper waits before one retry (`MAX_RETRY_WAIT`), and the row says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_longer_than_the_keeper_waits_is_named_in_the_row() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    buy_up_market(&w).await;
    let server = serve_inference(
        vec![
            Canned::status("429 Too Many Requests", "{\"error\":\"quota\"}")
                .header("retry-after", "120"),
            Canned::content("{\"verdict\":\"BUY_UP\"}"),
        ],
        None,
    )
    .await;
    let quote = keeper::domain::config::QuotePolicy { ttl_secs: 600, ..Default::default() };
    let mut k = w.keeper(Some(dir.path().to_path_buf())).quote(quote).build().unwrap();
    k.set_model(openai(&server.url, Duration::from_secs(10)));
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (1, 0, 1));
    assert_eq!(server.exchanges().len(), 1, "120 s is not waited out");
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    assert_eq!(off.len(), 1);
    let want = "not retried after attempt 1: the server asked to wait 120 s (Retry-After), \
                longer than the 60 s the keeper waits before a retry";
    assert!(off[0].error.contains(want), "{}", off[0].error);
    assert_eq!((off[0].transport.http_status, off[0].transport.attempt), (Some(429), Some(1)));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_rpc_and_inference_work_with_a_ca_trusted_through_ssl_cert_file() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m, 400_000, 20_000_000).await.unwrap();

    let pki = test_pki();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &pki.ca_pem).unwrap();
    let model = serve_inference(
        vec![Canned::content("{\"verdict\":\"BUY_UP\"}")],
        Some(pki.acceptor.clone()),
    )
    .await;
    assert!(model.url.starts_with("https://127.0.0.1:"));
    let anvil_addr = format!(
        "{}:{}",
        w.anvil.url.host_str().unwrap(),
        w.anvil.url.port_or_known_default().unwrap()
    );
    let rpc = format!("https://127.0.0.1:{}", tls_proxy(pki.acceptor.clone(), anvil_addr).await);
    let results = dir.path().join("results");

    // A child process, so the TLS roots come from a clean environment.
    let keeper = |trust_test_ca: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
        cmd.arg("--root")
            .arg(root())
            .args(["run", "--once", "--rpc-url", &rpc, "--model", "openai"])
            .args(["--openai-url", &model.url, "--openai-model", "test-model"])
            .arg("--gate")
            .arg(w.deployment.gate.to_string())
            .arg("--results")
            .arg(&results)
            .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap())
            .env_remove("KEEPER_OPENAI_API_KEY")
            .env_remove("SSL_CERT_DIR")
            .env_remove("SSL_CERT_FILE")
            // With an outage budget the keeper waits for a node that is not up yet; a TLS
            // failure is not that, so it still stops at once (one line, no "waiting" line).
            .env("KEEPER_MAX_OUTAGE_SECS", "60");
        if trust_test_ca {
            cmd.env("SSL_CERT_FILE", &ca_file);
        }
        let out = cmd.output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
    };

    // Without the test CA the node is unreachable, and the error names the real cause.
    let (code, err) = keeper(false);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("cannot reach the RPC at https://127.0.0.1:"), "{err}");
    assert!(err.contains("certificate"), "the TLS cause is shown, not cut off: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(model.exchanges().is_empty());

    // With it, both endpoints speak HTTPS and the answer reaches the chain.
    let (code, err) = keeper(true);
    assert_eq!(code, 0, "{err}");
    assert_eq!(model.exchanges().len(), 1, "the model was asked over TLS");
    let rows = common::record_rows(&results);
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 1, "{err}");
    assert_eq!((ds[0].raw.as_deref(), ds[0].reason), (Some("BUY_UP"), 0));
    assert_eq!(ds[0].market, m.to_checksum(None));
    assert!(offchain(&rows).is_empty());
    w.stop().await;
}

// --- a loopback server that holds requests open

/// What the holding server does with one request, chosen from its body.
#[derive(Clone)]
enum Hold {
    /// Answered as soon as it has been read.
    Now(Canned),
    /// Held open until the test calls [`Holding::release`], then answered.
    UntilReleased(Canned),
    /// Held open and never answered, until the client closes the connection.
    Forever,
}

/// An OpenAI-compatible server on 127.0.0.1: it reads each request whole, logs its body, then
/// does what the policy says for that body. One request per connection.
struct Holding {
    url: String,
    /// Bodies of the requests read whole, in arrival order.
    requests: Arc<Mutex<Vec<String>>>,
    /// Bodies of the requests answered, in answer order.
    answered: Arc<Mutex<Vec<String>>>,
    release: watch::Sender<bool>,
}

impl Holding {
    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn answered(&self) -> Vec<String> {
        self.answered.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Answers every request held [`Hold::UntilReleased`]: those held now and any later one.
    fn release(&self) {
        self.release.send_replace(true);
    }
}

async fn serve_holding(policy: impl Fn(&str) -> Hold + Send + Sync + 'static) -> Holding {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (requests, answered) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let (release, released) = watch::channel(false);
    let policy = Arc::new(policy);
    let (req_log, ans_log) = (requests.clone(), answered.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let (policy, req_log, ans_log) = (policy.clone(), req_log.clone(), ans_log.clone());
            let mut released = released.clone();
            tokio::spawn(async move {
                let Some((line, body)) = read_request_line(&mut sock).await else { return };
                if line.starts_with("GET ") {
                    return not_found(sock).await;
                }
                req_log.lock().unwrap_or_else(|e| e.into_inner()).push(body.clone());
                let reply = match policy(&body) {
                    Hold::Now(reply) => reply,
                    Hold::UntilReleased(reply) => tokio::select! {
                        r = released.wait_for(|r| *r) => match r {
                            Ok(_) => reply,
                            Err(_) => return,
                        },
                        // The client gave up first.
                        _ = until_closed(&mut sock) => return,
                    },
                    Hold::Forever => return until_closed(&mut sock).await,
                };
                write_canned(&mut sock, &reply).await;
                ans_log.lock().unwrap_or_else(|e| e.into_inner()).push(body);
                let _ = sock.shutdown().await;
            });
        }
    });
    Holding { url, requests, answered, release }
}

/// Returns when the peer closes the connection (or it fails).
async fn until_closed<S: AsyncRead + Unpin>(sock: &mut S) {
    let mut chunk = [0u8; 1024];
    while let Ok(1..) = sock.read(&mut chunk).await {}
}

/// The markets of `markets` whose prompt (the rendered user part names the market by its
/// checksummed address, `market: 0x...`) is in `body`.
fn asked_about(body: &str, markets: &[Address]) -> Vec<Address> {
    markets
        .iter()
        .copied()
        .filter(|m| body.contains(&format!("market: {}", m.to_checksum(None))))
        .collect()
}

/// The gate's `Decision` events about `market` in the node's blocks so far, with their block.
async fn decided(
    p: &DynProvider,
    gate: Address,
    market: Address,
) -> Vec<(u64, IRiskGate::Decision)> {
    let filter = Filter::new()
        .address(gate)
        .event_signature(IRiskGate::Decision::SIGNATURE_HASH)
        .topic1(market.into_word())
        .from_block(0);
    let logs = p.get_logs(&filter).await.expect("the node answers eth_getLogs");
    logs.iter()
        .map(|l| {
            let ev = IRiskGate::Decision::decode_log(&l.inner).expect("a Decision event");
            (l.block_number.expect("a mined log"), ev.data)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_waiting_on_the_model_is_a_clean_stop_with_a_row_per_dropped_ask() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // Two due markets (asks at 0.40, so a BUY_UP would pass), asked concurrently (the default
    // concurrency is 32); the model never answers about either.
    let markets = [buy_up_market(&w).await, buy_up_market(&w).await];
    let server = serve_holding(|_| Hold::Forever).await;

    // The long-lived bot (no --once), stopped only by the signal. The inference timeout and the
    // interval (an hour each) are far past the hang guard, so neither a timed-out ask nor a
    // second cycle can happen before the signal.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .args(["run", "--interval-secs", "3600", "--inference-timeout-secs", "3600"])
        .args(["--model", "openai", "--openai-url", &server.url, "--openai-model", "test-model"])
        .arg("--rpc-url")
        .arg(w.anvil.url.as_str())
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .arg("--results")
        .arg(&results)
        .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap())
        .env_remove("KEEPER_OPENAI_API_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = Drained::new(&mut child);

    // Both asks are in flight: the server holds one request about each market.
    let mut exited = None;
    eventually(HANG_GUARD, || {
        exited = exited.or(child.try_wait().unwrap());
        server.requests().len() >= 2 || exited.is_some()
    })
    .await;
    assert!(
        exited.is_none(),
        "the keeper exited before being asked to: {exited:?}: {}",
        log.text()
    );
    let mut asked: Vec<Address> =
        server.requests().iter().flat_map(|b| asked_about(b, &markets)).collect();
    asked.sort_unstable();
    let mut want = markets;
    want.sort_unstable();
    assert_eq!(asked, want, "one request about each market: {}", log.text());
    assert!(server.answered().is_empty());

    let pid = child.id().unwrap() as libc::pid_t;
    // SAFETY: kill(2) on the pid of the child this test spawned (it has not been reaped: it was
    // still running above, and only this test waits on it).
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = tokio::time::timeout(HANG_GUARD, child.wait())
        .await
        .expect("the keeper stops after SIGTERM (hang guard)")
        .unwrap();
    let err = log.finish().await;
    // `keeper run` on a signal: exit 0 (run::run). Each ask in flight is dropped, and leaves an
    // off-chain row saying so (issue 32: they used to vanish, so a reader never saw the ask);
    // nothing is submitted or decided, and the breaker is not fed (a shutdown is not the
    // model's failure).
    assert!(status.success(), "clean exit on SIGTERM, got {status}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(server.requests().len(), 2, "nothing was asked again: {err}");
    assert!(!err.contains("inference breaker open"), "{err}");

    let feed_path = results.join("feed.jsonl");
    assert!(feed_path.exists(), "the record is written on the way out: {err}");
    let rows = feed::read_feed(&feed_path).unwrap();
    let off = offchain(&rows);
    let mut dropped: Vec<Address> = off.iter().map(|o| o.market.parse().unwrap()).collect();
    dropped.sort_unstable();
    assert_eq!(dropped, want, "one row per dropped ask: {rows:?}");
    for o in &off {
        assert_eq!(o.error, keeper::engine::SHUTDOWN_DROPPED);
        assert!(o.prompt_hash.is_some(), "the prompt that was asked is named: {o:?}");
        assert_eq!(o.transport.http_status, None, "no HTTP exchange ended: {o:?}");
    }
    assert!(decisions(&rows).is_empty(), "nothing was answered, nothing decided: {rows:?}");

    let journal_text = std::fs::read_to_string(results.join(JOURNAL_FILE)).unwrap_or_default();
    let journal = Journal::open(&results).unwrap();
    assert_eq!(journal.offchain().len(), 2, "journalled before exit: {journal_text}");
    assert_eq!(journal.submissions().count(), 0, "nothing signed or sent: {journal_text}");
    for m in markets {
        assert!(decided(&w.keeper_rpc, w.deployment.gate, m).await.is_empty());
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_submitted_as_they_arrive_not_after_the_slowest() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    // Two due books asking 0.40. B is created first, so it is discovered and asked first: a
    // keeper that took answers in order, or all of them before submitting, would keep A's
    // submission behind B's held answer.
    let b = buy_up_market(&w).await;
    let a = buy_up_market(&w).await;
    let markets = [a, b];
    // The model abstains about A at once; its BUY_UP about B is held until the test releases it.
    let server = serve_holding(move |body| match asked_about(body, &markets)[..] {
        [m] if m == a => Hold::Now(Canned::content("{\"verdict\":\"ABSTAIN\"}")),
        [m] if m == b => Hold::UntilReleased(Canned::content("{\"verdict\":\"BUY_UP\"}")),
        _ => Hold::Now(Canned::status("400 Bad Request", "{\"error\":\"which market?\"}")),
    })
    .await;
    // How many requests about `m` the server has read, and answered.
    let count = |bodies: Vec<String>, m: Address| {
        bodies.iter().filter(|body| asked_about(body, &markets) == [m]).count()
    };

    // The bot's own batch window (the test world holds a cycle's answers to its end): A's
    // answer goes out once the window has passed, not after B's.
    let mut k = w
        .keeper(Some(dir.path().to_path_buf()))
        .concurrency(2)
        .batch_window(keeper::engine::DEFAULT_BATCH_WINDOW)
        .build()
        .unwrap();
    // An inference timeout far past every hang guard: only the release ends B's wait.
    let model = openai(&server.url, Duration::from_secs(3_600));
    let (p, gate) = (&w.keeper_rpc, w.deployment.gate);
    let observe = async {
        // A's decision is mined (anvil mines each transaction as it arrives) while B's request
        // is held open, unanswered.
        let a_mined =
            eventually_async(HANG_GUARD, || async move { !decided(p, gate, a).await.is_empty() })
                .await;
        assert!(
            a_mined,
            "A's decision never reached the chain while B's answer was held; requests about A: \
             {}, about B: {}",
            count(server.requests(), a),
            count(server.requests(), b),
        );
        assert!(
            eventually(HANG_GUARD, || count(server.requests(), b) == 1).await,
            "B was never asked"
        );
        assert_eq!(count(server.answered(), b), 0, "B's answer is still held");
        assert!(decided(p, gate, b).await.is_empty(), "B cannot be decided before its answer");
        server.release();
    };
    let cancel = CancellationToken::new();
    k.set_model(model);
    let (r, ()) = tokio::time::timeout(3 * HANG_GUARD, async {
        tokio::join!(k.cycle(None, &cancel), observe)
    })
    .await
    .expect("the cycle ends once B is answered (hang guard)");
    let r = r.unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (2, 2, 0));
    assert_eq!((count(server.requests(), a), count(server.requests(), b)), (1, 1));

    let (da, db) = (decided(p, gate, a).await, decided(p, gate, b).await);
    assert_eq!((da.len(), db.len()), (1, 1), "one decision per market");
    // ABSTAIN: verdict 0, reason 1 (rule 1, nothing else evaluated). BUY_UP on an ask of 0.40
    // inside the band, with headroom, slots and collateral to spare: verdict 1, reason 0.
    assert_eq!((da[0].1.verdict, da[0].1.reason), (0, 1));
    assert_eq!((db[0].1.verdict, db[0].1.reason), (1, 0));
    assert!(da[0].0 < db[0].0, "A was mined before B: blocks {} and {}", da[0].0, db[0].0);

    let rows = common::record_rows(dir.path());
    assert!(offchain(&rows).is_empty());
    let ds = decisions(&rows);
    let row = |m: Address| {
        let m = m.to_checksum(None);
        *ds.iter().find(|d| d.market == m).unwrap_or_else(|| panic!("no row for {m}: {ds:?}"))
    };
    assert_eq!(ds.len(), 2);
    assert_eq!((row(a).raw.as_deref(), row(a).reason), (Some("ABSTAIN"), 1));
    // ask 0.40 on a 0.01 grid -> price 400000, quantity 10e6 (maxSize, lot 100), cost 4e6.
    let rb = row(b);
    assert_eq!((rb.raw.as_deref(), rb.reason), (Some("BUY_UP"), 0));
    assert_eq!((rb.price_paid.as_str(), rb.cost.as_str()), ("400000", "4000000"));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stop_once_the_answer_could_no_longer_arrive_before_its_deadline() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    buy_up_market(&w).await;
    // The quote lives 10 s; the server says "come back in 4 s" every time. Attempt 1 at ~0 s
    // (retry at 4 < 10), attempt 2 at ~4 s (retry at 8 < 10), attempt 3 at ~8 s: a retry would
    // land at 12 > 10, past the deadline, so the keeper gives up there. Each decision has 2 s of
    // slack on either side for a slow machine; the answer queued fourth is never asked for.
    let limited = || {
        Canned::status("429 Too Many Requests", "{\"error\":\"slow down\"}")
            .header("retry-after", "4")
    };
    let server = serve_inference(
        vec![limited(), limited(), limited(), Canned::content("{\"verdict\":\"BUY_UP\"}")],
        None,
    )
    .await;
    let quote = keeper::domain::config::QuotePolicy { ttl_secs: 10, ..Default::default() };
    let mut k = w.keeper(Some(dir.path().to_path_buf())).quote(quote).build().unwrap();
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    k.set_model(openai(&server.url, Duration::from_secs(10)));
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (1, 0, 1));
    assert_eq!(server.exchanges().len(), 3, "attempts 1-3; the fourth would come too late");
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    assert_eq!(off.len(), 1);
    assert!(off[0].error.contains("gave up after attempt 3"), "{}", off[0].error);
    assert!(off[0].error.contains("reason 16"), "{}", off[0].error);
    assert_eq!((off[0].transport.http_status, off[0].transport.attempt), (Some(429), Some(3)));
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), nonce);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_the_chain_would_refuse_as_expired_is_never_sent() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let m = buy_up_market(&w).await;
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    let cancel = CancellationToken::new();
    let (states, head) = steps::read(&mut k, &[m]).await.unwrap();
    k.set_model(Model::Builtin);
    let answers = steps::ask_all(&mut k, states, head, None, &cancel).await.unwrap();
    assert_eq!(answers.len(), 1);
    // Pinned clock: the next block after the read is head + 1, so the deadline is head + 61.
    let deadline = answers[0].quote.deadline;
    assert_eq!(deadline, head.time + 1 + 60);
    // While the model "thought", the chain moved to the deadline itself: the next block would
    // be one second past it, so the gate would refuse the answer (rule 16).
    w.mine_at(deadline).await.unwrap();
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let sent = steps::submit(&mut k, answers).await.unwrap();
    assert!(sent.is_empty());
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), nonce);
    // `submit` journals the row; the feed is written at the end of a cycle.
    let off = k.executor().journal().offchain();
    assert_eq!(off.len(), 1);
    let want = format!(
        "the next block's chain time {} is past the quote's deadline {deadline}",
        deadline + 1
    );
    assert!(off[0].error.contains(&want), "{}", off[0].error);
    assert!(k.record().unwrap().decided.is_empty());
    drop(dir);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_stays_down_writes_a_few_rows_per_market_per_hour_then_resumes() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..8 {
        buy_up_market(&w).await;
    }
    // A server that answers every request with HTTP 500 (its script is empty).
    let down = serve_inference(vec![], None).await;
    let model = openai(&down.url, Duration::from_secs(10));
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    let cancel = CancellationToken::new();
    // An hour of chain time, a cycle a minute. Pinned clock: the head is at h = t_k and the
    // next block at h + 1 (the time the breaker runs on), with t_k = s + 60k from the head s
    // after the setup. Expected from health.rs's defaults:
    //   k = 0 (s+1): all 8 asked and failing (in flight together); the 5th trips 300 s: until s+301;
    //   k = 5 (s+301): one probe, fails: 600 s, until s+901;
    //   k = 15 (s+901): one probe, fails: 1,200 s, until s+2,101;
    //   k = 35 (s+2,101): one probe, fails: 2,400 s, until s+4,501.
    // So 8 + 3 = 11 off-chain rows in the hour, against 8 × 60 = 480 with no backoff.
    let s = w.chain_time().await.unwrap();
    let mut asked_at = Vec::new();
    k.set_model(model);
    for k_ in 0..60u64 {
        if k_ > 0 {
            w.mine_at(s + 60 * k_).await.unwrap();
        }
        let r = k.cycle(None, &cancel).await.unwrap();
        if r.asked > 0 {
            asked_at.push((k_, r.asked));
        }
        assert_eq!(r.submitted, 0);
    }
    assert_eq!(asked_at, vec![(0, 8), (5, 1), (15, 1), (35, 1)]);
    let rows = common::record_rows(dir.path());
    assert_eq!(offchain(&rows).len(), 11);
    eprintln!(
        "breaker: a model down for an hour of chain time wrote {} off-chain rows for 8 markets \
         (a cycle a minute; 480 without backoff)",
        offchain(&rows).len()
    );
    // The model is back (the built-in rules stand in for it): the probe at s+4,501 is answered,
    // which closes the breaker, and the next cycle asks the seven others.
    w.mine_at(s + 4_500).await.unwrap();
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    assert_eq!((r.asked, r.held_back), (1, 7));
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    assert_eq!(r.asked, 7);
    w.stop().await;
}
