//! Issue 52, item 2: the chain-reading layer learns a node's limits by how the node behaves,
//! not by the words it uses. A real anvil holds a history of real logs; in front of it a
//! loopback JSON-RPC proxy (`common::rpc_proxy_http`) stands in for what anvil cannot be made
//! to do on demand: refuse an `eth_getLogs` wider than [`LIMIT`] blocks in each hosted
//! provider's wording (or as a bare HTTP error, or a body that is not JSON), fail every
//! `eth_getLogs` (an outage of a node that still answers), and lack `eth_getBlockReceipts`.
//! Everything the keeper runs is its own: [`reads::NodeLimits`] (each test owns one, so the
//! process's [`reads::NODE`] is never touched and the tests share nothing), alloy's HTTP
//! transport, the node. Nothing depends on the wall clock: the counts are of requests.
// One test at a time per binary (`common::serial`), held across awaits on purpose.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    primitives::B256,
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
};
use common::{anvil_rpc, builtin_cycle, serial, world};
use keeper::{
    chain::reads::{self, CollectError, NodeLimits},
    dev::world::World,
};
use serde_json::{json, Value};
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
};

/// The widest `eth_getLogs` range the stood-in provider answers (hosted providers' caps run
/// from 50 to 10,000 blocks; a small one keeps the history short: anvil mines about 100
/// blocks a second here).
const LIMIT: u64 = 100;
/// The range the wording test's reads ask for: five times the limit.
const RANGE: u64 = 500;
/// `--log-range`'s default, the range the outage test's reads ask for.
const DEFAULT_RANGE: u64 = 5_000;

/// How the stood-in provider refuses a request.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    /// A JSON-RPC error answer with this message (`{span}` is the refused span).
    Rpc(&'static str),
    /// An HTTP status with a plain-text body, no JSON-RPC answer at all.
    Http(u16, &'static str),
}

/// The wordings measured in issue 52 (and an HTTP 400 and a 200 that is not JSON), with the
/// refusals a read of [`RANGE`] blocks takes and the width it keeps:
/// - a number below the refused span is tried first: 500 refused, 100 answered: 1 refusal,
///   width 100;
/// - no number (or none below the span): halving, 500 -> 250 -> 125 -> 62, the first width
///   <= 100: 3 refusals (ceil(log2(500 / 100)) = ceil(2.32) = 3), width 62.
const WORDINGS: [(Refusal, usize, u64); 8] = [
    (Refusal::Rpc("query exceeds max block range 100"), 1, 100),
    (Refusal::Rpc("eth_getLogs is limited to a 100 block range"), 1, 100),
    (
        Refusal::Rpc(
            "Log response size exceeded. You can make eth_getLogs requests with up to a 100 \
             block range and no limit on the response size",
        ),
        1,
        100,
    ),
    (Refusal::Rpc("block range too high"), 3, 62),
    // The span first: read as the limit before, it narrowed 500 blocks to 499 at a time.
    (Refusal::Rpc("range {span} exceeds limit of 100"), 1, 100),
    // Numbers run into letters are not widths: halving.
    (Refusal::Rpc("exceeded 10K logs or 2K blocks for 0x1f4"), 3, 62),
    (Refusal::Http(400, "Bad Request"), 3, 62),
    (Refusal::Http(200, "<html><body>upstream refused the query</body></html>"), 3, 62),
];

/// A proxy in front of `w`'s anvil that shows each request to `refuse` (once) and answers
/// its refusal instead of the node when it returns one.
async fn proxy(
    w: &World,
    refuse: impl Fn(&Value) -> Option<Refusal> + Send + Sync + 'static,
) -> String {
    common::rpc_proxy_http(
        w.anvil.url.to_string(),
        Arc::new(move |req: &Value| match refuse(req)? {
            Refusal::Http(status, body) => Some((status, "text/plain", body.to_string())),
            Refusal::Rpc(msg) => {
                let span = common::log_span(req).unwrap_or(0).to_string();
                let message = msg.replace("{span}", &span);
                let answer = json!({"jsonrpc": "2.0", "id": req["id"], "error":
                    {"code": -32005, "message": message}});
                Some((200, "application/json", answer.to_string()))
            }
        }),
        Arc::new(|_: &Value| None),
        Arc::new(|_: &Value, answer| answer),
    )
    .await
}

fn provider(url: &str) -> DynProvider {
    keeper::chain::read_provider(&url.parse().unwrap()).unwrap()
}

/// Every log on the chain over `[0, to]`.
fn all_logs() -> Filter {
    Filter::new()
}

/// A world whose history is longer than [`RANGE`] with logs on both sides of it: markets
/// created at the start, 600 empty blocks, markets created after them.
async fn long_history() -> (World, u64) {
    let w = world(&[]).await;
    common::abstain_markets(&w, 2).await;
    anvil_rpc(&w.keeper_rpc, "anvil_mine", json!([format!("{:#x}", 600)])).await;
    common::abstain_markets(&w, 2).await;
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    assert!(head > 600, "a history longer than one read of {RANGE} blocks: {head}");
    (w, head)
}

/// A refusal of a wide `eth_getLogs` is recognised by behaviour: in every wording (and as an
/// HTTP error, or a body that is not JSON) the read narrows until it succeeds, returns the
/// same logs as a direct read, keeps a width within the limit, and a second read is refused
/// no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_log_ranges_are_narrowed_until_answered_in_every_wording() {
    let _g = serial();
    let (w, head) = long_history().await;
    let direct = w.keeper_rpc.get_logs(&all_logs().from_block(0).to_block(head)).await.unwrap();
    assert!(direct.len() >= 8, "logs before and after the 600 empty blocks: {}", direct.len());
    assert!(direct.iter().any(|l| l.block_number > Some(600)));
    for (refusal, refusals, kept) in WORDINGS {
        let refused = Arc::new(AtomicUsize::new(0));
        let (r, widest) = (refused.clone(), Arc::new(AtomicUsize::new(0)));
        let wd = widest.clone();
        let url = proxy(&w, move |req| {
            let span = common::log_span(req)?;
            if span > LIMIT {
                r.fetch_add(1, Ordering::SeqCst);
                return Some(refusal);
            }
            wd.fetch_max(span as usize, Ordering::SeqCst);
            None
        })
        .await;
        let p = provider(&url);
        let limits = NodeLimits::new();
        let got = limits.filtered_logs(&p, &all_logs(), 0, head, RANGE).await;
        let got = got.unwrap_or_else(|e| panic!("{refusal:?}: {}", keeper::error_chain(&e)));
        assert_eq!(got, direct, "{refusal:?}: the same logs as one direct read");
        assert_eq!(refused.load(Ordering::SeqCst), refusals, "{refusal:?}");
        assert_eq!(limits.log_range_now(RANGE), kept, "{refusal:?}: the width kept");
        assert!(widest.load(Ordering::SeqCst) as u64 <= LIMIT);
        // The width is kept: a second read is never refused.
        let again = limits.filtered_logs(&p, &all_logs(), 0, head, RANGE).await.unwrap();
        assert_eq!(again, direct);
        assert_eq!(refused.load(Ordering::SeqCst), refusals, "{refusal:?}: refused once only");
        println!("{refusal:?}: {refusals} refusal(s), kept {kept} blocks (limit {LIMIT})");
    }
    w.stop().await;
}

/// The `CollectError::Logs` of a read that failed.
fn logs_error(r: reads::Result<Vec<Log>>) -> (u64, u64, u64, u32, String) {
    match r {
        Err(e @ CollectError::Logs { from, to, widest, tries, .. }) => {
            (from, to, widest, tries, keeper::error_chain(&e))
        }
        other => panic!("an eth_getLogs failure, not {other:?}"),
    }
}

/// Only a failure at one block is an outage, and it surfaces after a bounded number of tries
/// without narrowing the width kept. A read of `--log-range`'s default, 5,000 blocks, halved
/// to one block tries 5,000, 2,500, 1,250, 625, 312, 156, 78, 39, 19, 9, 4, 2 and 1 blocks: 13
/// tries (ceil(log2(5000)) = 13; one more at most when a number the failure names is tried
/// first). Two outages: a node that answers every `eth_getLogs` with an error (the proxy: the
/// reads over [0, 9,999] never reach anvil, whose chain is shorter), and a node that is down (a
/// loopback port nobody listens on: a real connection refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_fails_at_one_block_after_few_tries_and_keeps_the_width() {
    let _g = serial();
    let w = world(&[]).await;
    let tried = Arc::new(AtomicUsize::new(0));
    let t = tried.clone();
    let url = proxy(&w, move |req| {
        common::log_span(req)?;
        t.fetch_add(1, Ordering::SeqCst);
        Some(Refusal::Rpc("upstream unavailable"))
    })
    .await;
    let limits = NodeLimits::new();
    let to = 2 * DEFAULT_RANGE - 1;
    let r = limits.filtered_logs(&provider(&url), &all_logs(), 0, to, DEFAULT_RANGE).await;
    let (from, at, widest, tries, said) = logs_error(r);
    assert_eq!((from, at, widest, tries), (0, 0, DEFAULT_RANGE, 13), "{said}");
    assert_eq!(tried.load(Ordering::SeqCst), 13, "every try reached the node");
    assert!(said.contains("upstream unavailable"), "names the node's error: {said}");
    assert!(said.contains("did not refuse a wide range"), "{said}");
    assert_eq!(limits.log_range_now(DEFAULT_RANGE), DEFAULT_RANGE, "a failure keeps no width");
    println!("outage (error answers): {tries} tries, failed at block {from}: {said}");

    // A node that is down: a loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = provider(&format!("http://127.0.0.1:{port}/"));
    let r = limits.filtered_logs(&down, &all_logs(), 0, to, DEFAULT_RANGE).await;
    let (from, at, widest, tries, said) = logs_error(r);
    assert_eq!((from, at, widest, tries), (0, 0, DEFAULT_RANGE, 13), "{said}");
    assert_eq!(limits.log_range_now(DEFAULT_RANGE), DEFAULT_RANGE, "a node down keeps no width");
    println!("outage (node down): {tries} tries: {said}");

    // The same reader still reads its whole range at once from the node when it answers.
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let got = limits.filtered_logs(&w.keeper_rpc, &all_logs(), 0, head, DEFAULT_RANGE).await;
    let direct = w.keeper_rpc.get_logs(&all_logs().from_block(0).to_block(head)).await.unwrap();
    assert!(!direct.is_empty());
    assert_eq!(got.unwrap(), direct);
    w.stop().await;
}

/// Decisions published in `rounds` separate blocks (one cycle of the keeper each, about one
/// new market), and the gate's logs holding them.
async fn decisions_in_blocks(w: &World, rounds: usize) -> Vec<Log> {
    let mut k = w.keeper(None).build().unwrap();
    for _ in 0..rounds {
        common::abstain_markets(w, 1).await;
        let r = builtin_cycle(&mut k).await;
        assert_eq!(r.submitted, 1, "one decision this round");
    }
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    reads::gate_logs(&w.keeper_rpc, w.deployment.gate, 0, head, RANGE).await.unwrap()
}

/// The blocks and transactions holding `logs`' decisions.
fn decision_blocks(logs: &[Log]) -> (usize, usize) {
    use alloy::sol_types::SolEvent;
    let decided = logs.iter().filter(|l| {
        l.topic0() == Some(&keeper::kit::bindings::IRiskGate::Decision::SIGNATURE_HASH)
    });
    let blocks: std::collections::BTreeSet<B256> =
        decided.clone().filter_map(|l| l.block_hash).collect();
    let txs: std::collections::BTreeSet<B256> =
        decided.filter_map(|l| l.transaction_hash).collect();
    (blocks.len(), txs.len())
}

/// Issue 52, item 2: a node without `eth_getBlockReceipts` (the proxy answers it "method not
/// found", as such nodes do) is asked for it once: that call fails and the per-transaction
/// receipts then succeed, so it is not asked again, at this read's other blocks or later
/// reads. A node with it is asked once per block and never per transaction. Both give the
/// same gas as a direct read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_block_receipts_is_asked_for_them_once() {
    let _g = serial();
    let w = world(&[]).await;
    let logs = decisions_in_blocks(&w, 3).await;
    let (blocks, txs) = decision_blocks(&logs);
    assert_eq!((blocks, txs), (3, 3), "three decisions in three blocks");
    let mut direct = HashMap::new();
    NodeLimits::new().tx_gas(&w.keeper_rpc, &logs, &mut direct).await.unwrap();
    assert_eq!(direct.len(), txs);

    let count = |method: &'static str, n: &Arc<AtomicUsize>| {
        let n = n.clone();
        move |req: &Value| {
            if req["method"] == method {
                n.fetch_add(1, Ordering::SeqCst);
            }
        }
    };
    let (by_block, by_tx) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (cb, ct) =
        (count("eth_getBlockReceipts", &by_block), count("eth_getTransactionReceipt", &by_tx));
    let url = proxy(&w, move |req| {
        cb(req);
        ct(req);
        (req["method"] == "eth_getBlockReceipts").then_some(Refusal::Rpc(
            "the method eth_getBlockReceipts does not exist/is not available",
        ))
    })
    .await;
    let (p, limits) = (provider(&url), NodeLimits::new());
    let mut gas = HashMap::new();
    limits.tx_gas(&p, &logs, &mut gas).await.unwrap();
    assert_eq!(gas, direct);
    assert!(limits.lacks_block_receipts());
    // Asked at the first block only; each of the 3 transactions read on its own.
    assert_eq!((by_block.load(Ordering::SeqCst), by_tx.load(Ordering::SeqCst)), (1, 3));
    let mut again = HashMap::new();
    limits.tx_gas(&p, &logs, &mut again).await.unwrap();
    assert_eq!(again, direct);
    // A later read: 3 more per-transaction receipts, no block receipts asked.
    assert_eq!((by_block.load(Ordering::SeqCst), by_tx.load(Ordering::SeqCst)), (1, 6));
    println!("without eth_getBlockReceipts: asked once over two reads of {blocks} blocks");

    // A node with the method: one eth_getBlockReceipts per block, nothing per transaction.
    let (by_block, by_tx) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (cb, ct) =
        (count("eth_getBlockReceipts", &by_block), count("eth_getTransactionReceipt", &by_tx));
    let url = proxy(&w, move |req| {
        cb(req);
        ct(req);
        None
    })
    .await;
    let (p, limits) = (provider(&url), NodeLimits::new());
    let mut gas = HashMap::new();
    limits.tx_gas(&p, &logs, &mut gas).await.unwrap();
    assert_eq!(gas, direct);
    assert!(!limits.lacks_block_receipts());
    assert_eq!((by_block.load(Ordering::SeqCst), by_tx.load(Ordering::SeqCst)), (3, 0));
    println!("with eth_getBlockReceipts: one per block ({blocks}), none per transaction");
    w.stop().await;
}
