//! The real language model answering the gate: the bundled SmolLM2-135M-Instruct (installed by
//! `make bootstrap`, its file checked against tools/llm.lock) behind llama.cpp's own
//! OpenAI-compatible server on loopback, a real anvil and the compiled contracts. No stub: the
//! stub-server tests (`inference.rs`) cover the faults a real server will not produce on demand.
//! Chain time is a count of blocks (`common::world`), answers are sampled at temperature 0 with
//! a fixed seed on one server slot, and no assertion depends on how long the model takes (the
//! inference timeout is far above the ~1 s an answer takes here).
// One test at a time per binary (`common::serial`), held across awaits on purpose.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{primitives::keccak256, providers::Provider, rpc::types::Filter, sol_types::SolEvent};
use common::{decisions, offchain, root, serial, world};
use keeper::{
    commands::cli::InferenceOptions,
    domain::config::ResponseFormat,
    inference::{
        openai::{OpenAiClient, VERDICTS},
        Model, Prompt,
    },
    kit::bindings::{reason, IRiskGate},
};
use riskgate_kit::llm::{bundled_model, LlmOptions, LlmServer};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Far above the ~1 s an answer takes on this machine, so only a dead server fails an ask.
const TIMEOUT: Duration = Duration::from_secs(120);

fn options(format: ResponseFormat) -> InferenceOptions {
    InferenceOptions { max_tokens: 48, temperature: 0.0, response_format: format, seed: Some(1) }
}

async fn client(server: &LlmServer, format: ResponseFormat) -> Model {
    Model::OpenAi(OpenAiClient::for_bundled(server, TIMEOUT, options(format)).await.unwrap())
}

/// A loopback relay to the model server on `upstream`: it passes every byte both ways, and
/// holds the second chat request it sees (the keeper's second ask) until the test says the
/// server is stopped (`true` on the returned sender), then drops that connection; later
/// connections are relayed again (refused while nothing listens upstream). Returns its base
/// URL and the signal that the second ask arrived.
async fn stop_at_second_ask(
    upstream: u16,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<()>, tokio::sync::watch::Sender<bool>) {
    use std::sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (arrived, arrived_rx) = tokio::sync::mpsc::unbounded_channel();
    let (stopped, stopped_rx) = tokio::sync::watch::channel(false);
    let asks = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let (asks, arrived, mut stopped_rx) =
                (asks.clone(), arrived.clone(), stopped_rx.clone());
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                else {
                    return;
                };
                let (mut from_server, mut to_server) = server.into_split();
                let (mut from_client, mut to_client) = client.split();
                let up = async {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match from_client.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        // reqwest writes a request's head in one piece.
                        let posts = buf[..n]
                            .windows(b"POST /v1/chat".len())
                            .filter(|w| *w == b"POST /v1/chat")
                            .count();
                        let before = asks.fetch_add(posts, Ordering::SeqCst);
                        if before < 2 && before + posts >= 2 {
                            arrived.send(()).unwrap();
                            let _ = stopped_rx.wait_for(|s| *s).await;
                            return;
                        }
                        if to_server.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                };
                let down = tokio::io::copy(&mut from_server, &mut to_client);
                // Whichever side ends first ends the connection.
                tokio::select! {
                    _ = up => {}
                    _ = down => {}
                }
            });
        }
    });
    (url, arrived_rx, stopped)
}

/// Markets with a book on both sides at several prices (UP ask / UP bid): 0.30/0.25,
/// 0.45/0.40, 0.60/0.55, 0.75/0.70.
async fn markets(w: &keeper::dev::world::World, n: u64) -> Vec<alloy::primitives::Address> {
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let mut out = Vec::new();
    for i in 0..n {
        let ask = 300_000 + 150_000 * (i % 4);
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, ask, 20_000_000).await.unwrap();
        w.bid(m, ask - 50_000, 20_000_000).await.unwrap();
        out.push(m);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_model_answers_the_gate_and_the_record_names_it_as_the_server_reported() {
    let _g = serial();
    let pinned = bundled_model().unwrap();
    let server = LlmServer::start(LlmOptions::bundled(&root()).unwrap()).await.unwrap();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    let cancel = CancellationToken::new();

    // With the JSON-schema constraint: every answer is one of the three tokens.
    markets(&w, 4).await;
    let object = client(&server, ResponseFormat::Object).await;
    k.set_model(object);
    let r = k.cycle(Some("object"), &cancel).await.unwrap();
    let rows = common::record_rows(dir.path());
    let off: Vec<_> = offchain(&rows).iter().map(|o| o.error.clone()).collect();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (4, 4, 0), "off-chain: {off:?}");
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 4);
    for d in &ds {
        let raw = d.raw.as_deref().unwrap_or("");
        assert!(VERDICTS.contains(&raw), "answer {raw:?} is not one of the three tokens");
        // The server's own name for what answered, whatever the request asked for; the hash
        // is the lock's, because this process started the server on the file bootstrap checked.
        assert_eq!(d.note.model.as_deref(), Some(pinned.file.as_str()));
        assert_eq!(d.note.model_sha256.as_deref(), Some(pinned.sha256.as_str()));
        assert_eq!(d.note.model_kind, Some(format!("language model: {}", pinned.label)));
        assert_eq!(d.note.arrival.as_deref(), Some("content"));
    }
    eprintln!(
        "llm: object answers {:?}, reasons {:?}",
        ds.iter().map(|d| d.raw.clone().unwrap_or_default()).collect::<Vec<_>>(),
        ds.iter().map(|d| d.reason).collect::<Vec<_>>()
    );

    // Without a constraint the model writes prose; it reaches the chain verbatim (the event's
    // length and keccak are of the exact text the feed holds) and is refused as reason 11.
    markets(&w, 2).await;
    let free = client(&server, ResponseFormat::None).await;
    k.set_model(free);
    let r = k.cycle(Some("none"), &cancel).await.unwrap();
    assert_eq!((r.asked, r.submitted), (2, 2));
    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    let prose: Vec<_> = ds.iter().filter(|d| d.note.scenario.as_deref() == Some("none")).collect();
    assert_eq!(prose.len(), 2);
    let logs = w
        .keeper_rpc
        .get_logs(
            &Filter::new()
                .address(w.deployment.gate)
                .event_signature(IRiskGate::Decision::SIGNATURE_HASH)
                .from_block(0),
        )
        .await
        .unwrap();
    for d in &prose {
        let raw = d.raw.as_deref().unwrap();
        assert!(!VERDICTS.contains(&raw), "an unconstrained answer was a bare token: {raw:?}");
        assert_eq!(d.reason, reason::INVALID_VERDICT, "{raw:?}");
        let ev = logs
            .iter()
            .find(|l| {
                // A batch carries both prose answers: the row's own log, not its transaction's first.
                l.transaction_hash.map(|h| h.to_string()) == Some(d.tx.clone())
                    && l.log_index == Some(d.log_index)
            })
            .map(|l| IRiskGate::Decision::decode_log(&l.inner).unwrap().data)
            .expect("the row's Decision event");
        assert_eq!(ev.rawHash, keccak256(raw.as_bytes()));
        assert_eq!(ev.rawLength, alloy::primitives::U256::from(raw.len()));
        eprintln!("llm: unconstrained answer, published verbatim as reason 11: {raw:?}");
    }
    w.stop().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_prompt_asked_three_times_at_temperature_zero_gets_the_same_answer() {
    let _g = serial();
    let server = LlmServer::start(LlmOptions::bundled(&root()).unwrap()).await.unwrap();
    let w = world(&[]).await;
    let m = markets(&w, 1).await[0];
    let mut k = w.keeper(None).build().unwrap();
    let head = k.stages().0.follow().await.unwrap().head;
    let info = k
        .collector()
        .markets()
        .into_iter()
        .find(|i| i.address == m)
        .expect("the market is followed");
    let state = keeper::chain::reads::read_market(&w.keeper_rpc, &info, head.number).await.unwrap();
    let at = keeper::inference::prompt::ReadAt { block: head.number, time: head.time };
    let prompt = Prompt::render(k.strategy().text(), &state, at).unwrap();
    for format in [ResponseFormat::Object, ResponseFormat::None] {
        let model = client(&server, format).await;
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(model.ask(&prompt, &state).await.unwrap().text);
        }
        eprintln!("llm: {format:?} three times: {got:?}");
        assert!(got.iter().all(|a| *a == got[0]), "{format:?}: {got:?}");
    }
    w.stop().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_server_that_stops_mid_cycle_costs_off_chain_rows_and_no_transaction_then_resumes()
{
    let _g = serial();
    let server = LlmServer::start(LlmOptions::bundled(&root()).unwrap()).await.unwrap();
    let port = server.port();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let ms = markets(&w, 4).await;
    // The keeper asks through a loopback relay that holds its second ask until the server is
    // stopped: the server stops between the first and the second ask of the cycle whatever the
    // machine's load (a stand-in for nothing: every byte is the real server's).
    let (relay_url, mut second_ask, stopped) = stop_at_second_ask(port).await;
    let pinned = bundled_model().unwrap();
    let mut client =
        OpenAiClient::new(&relay_url, &pinned.file, TIMEOUT, options(ResponseFormat::Object))
            .unwrap();
    client.describe().await;
    let model = Model::OpenAi(client);
    // One ask at a time, so the server stops between two of them.
    let mut k = w.keeper(Some(dir.path().to_path_buf())).concurrency(1).build().unwrap();
    let nonce_before = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let cancel = CancellationToken::new();
    let stopper = tokio::spawn(async move {
        second_ask.recv().await.expect("the second ask reaches the relay");
        server.stop().await;
        stopped.send(true).unwrap();
    });
    k.set_model(model);
    let r = k.cycle(None, &cancel).await.unwrap();
    stopper.await.unwrap();
    // The first ask was answered and decided; the server was gone for the other three.
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (4, 1, 3), "{r:?}");
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    assert_eq!(off.len(), r.offchain_failures);
    for o in &off {
        assert!(o.error.contains("inference"), "{}", o.error);
    }
    // Nothing was sent without an answer: one transaction per decision, none per failure.
    let nonce_after = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    assert_eq!(nonce_after - nonce_before, decisions(&rows).len() as u64);
    eprintln!(
        "llm: server stopped mid-cycle: {} decisions, {} off-chain rows, {} transactions",
        r.submitted,
        r.offchain_failures,
        nonce_after - nonce_before
    );

    // The server comes back on the same port. The markets left unanswered back off for 60 s
    // of chain time after their failure (runner/health.rs); a minute later the next cycle asks
    // them.
    let again = LlmServer::start(LlmOptions { port, ..LlmOptions::bundled(&root()).unwrap() })
        .await
        .unwrap();
    let now = w.chain_time().await.unwrap();
    w.mine_at(now + 61).await.unwrap();
    let r2 = k.cycle(None, &cancel).await.unwrap();
    assert_eq!((r2.asked, r2.submitted, r2.offchain_failures), (off.len(), off.len(), 0));
    let rows = common::record_rows(dir.path());
    let decided: std::collections::BTreeSet<String> =
        decisions(&rows).iter().map(|d| d.market.to_lowercase()).collect();
    for m in &ms {
        assert!(decided.contains(&m.to_string().to_lowercase()), "market {m} never decided");
    }
    w.stop().await;
    again.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_markets_than_the_model_answers_per_timeout_are_asked_one_slot_at_a_time() {
    let _g = serial();
    let server = LlmServer::start(LlmOptions::bundled(&root()).unwrap()).await.unwrap();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    const N: u64 = 10;
    markets(&w, N).await;
    // Each answer sent the moment it arrives (no batch window): the asks admitted after it read
    // the block it was mined in, whatever the machine's speed.
    let b = w.keeper(Some(dir.path().to_path_buf())).batch_window(Duration::ZERO);
    let mut k = b.build().unwrap();
    // The default --concurrency (32) would send all ten at once to a server that decodes one
    // at a time.
    assert!(k.strategy().ask_limit() >= N as usize, "the test needs a cap above the market count");

    // No wall clock decides anything here: the timeout is the suite's (far above an answer),
    // and what shows the asks were not all queued at once is on chain. A keeper that sent all
    // ten together would have read every book at the cycle's head block (all readBlocks equal,
    // and on a loaded machine most asks timed out in the server's queue); one that asks a slot
    // at a time admits each later ask after an earlier answer was submitted, so the readBlocks
    // move forward.
    let model = client(&server, ResponseFormat::Object).await;
    // The server said how many requests it decodes at once (`/props` total_slots: 1).
    assert_eq!(model.slots(), Some(1));
    k.set_model(model);
    assert_eq!(k.strategy().ask_limit(), 1);

    let cancel = CancellationToken::new();
    let r = k.cycle(None, &cancel).await.unwrap();
    let rows = common::record_rows(dir.path());
    let off: Vec<_> = offchain(&rows).iter().map(|o| o.error.clone()).collect();
    assert_eq!(
        (r.asked, r.submitted, r.offchain_failures),
        (N as usize, N as usize, 0),
        "off-chain: {off:?}"
    );
    let ds = decisions(&rows);
    assert_eq!(ds.len(), N as usize);
    // Each ask after the first waited for the slot, so it read the chain again when it was
    // sent: the answers before it had been sent (and anvil mines each on arrival, though the
    // send may return just before the block is in), so readBlocks never go back and the last
    // ask read a later block than the first.
    let reads: Vec<u64> = ds.iter().map(|d| d.read_block).collect();
    assert!(reads.windows(2).all(|p| p[0] <= p[1]), "readBlocks {reads:?}");
    assert!(reads[N as usize - 1] > reads[0], "readBlocks {reads:?}");
    // And every prompt, re-read mid-cycle included, re-derives from the chain alone.
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let labels: Vec<String> =
        keeper::kit::bindings::REASON_LABELS.iter().map(|s| s.to_string()).collect();
    let chain_id = w.deployment.chain_id;
    let record = keeper::record::assemble::read_chain_record(
        &w.keeper_rpc,
        chain_id,
        w.deployment.gate,
        &labels,
        0,
        head,
        5_000,
    )
    .await
    .unwrap();
    keeper::record::publish_strategy(dir.path(), k.strategy().text()).unwrap();
    let check = keeper::record::rederive::check(
        &w.keeper_rpc,
        w.deployment.factory,
        &record,
        &rows,
        &rows,
        dir.path(),
        None,
        head,
        5_000,
    )
    .await
    .unwrap();
    assert_eq!((check.checked, check.matched), (N as usize, N as usize), "{:?}", check.problems);
    w.stop().await;
    server.stop().await;
}
