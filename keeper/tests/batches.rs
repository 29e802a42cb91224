//! The keeper's batches (issue 37, item 3) against a real anvil and the real compiled gate: the
//! batch twins of the single submissions' faults in `faults.rs`. A cycle's answers go out as one
//! `submitVerdicts` transaction carrying N decisions, journalled in one line; the tracker
//! follows that one transaction through paused mining, a dropped transaction, a reorg deeper
//! than the confirmations and a SIGKILL with it in flight, and every decision is published once.
//! A batch the gate would refuse whole goes out one answer at a time instead; one too big for
//! half the block gas limit is halved.
//!
//! Chain time never depends on the wall clock: every block is 1 s after the one before
//! (`common::world`), and blocks are mined on demand (automine off where order matters).
//! Wall-clock sleeps only make a re-send due (it can only become more due as time passes); the
//! batch window is set past any cycle's length wherever which answers share a batch matters, so
//! the batches do not depend on the machine's load either.
// Each test runs on its own runtime; the std lock held across awaits is exactly what serialises
// them (no task inside one runtime ever contends for it).
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    consensus::Transaction as _,
    primitives::{Address, TxHash},
    providers::Provider,
};
use common::{
    anvil_rpc, automine, builtin_cycle, buy_up_market, chain_record, decisions, eventually_async,
    keeper_bin, mine, offchain, per_market, serial, world, HANG_GUARD,
};
use keeper::{
    chain::journal::{Entry, Journal, JOURNAL_FILE},
    dev::{steps, world::World},
    engine::Engine,
    kit::bindings::reason,
};
use serde_json::json;
use std::{path::Path, process::Stdio, time::Duration};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A re-send becomes due once `resend_after` has passed since the last send; sleeping longer
/// makes it due whatever the machine's load.
const RESEND_AFTER: Duration = Duration::from_millis(300);
const PAST_RESEND: Duration = Duration::from_millis(400);

/// A keeper on `w`'s gate keeping its journal and feed in `dir`, holding every answer of a
/// cycle for one batch at its end.
fn batching(w: &World, dir: &TempDir, resend_after: Duration, confirmations: u64) -> Engine {
    let b = w.keeper(Some(dir.path().to_path_buf())).batch_window(Duration::MAX);
    b.resend_after(resend_after).confirmations(confirmations).resume().build().unwrap()
}

/// `n` markets the builtin model answers ABSTAIN about (their only book is an ask at 0.52).
async fn abstain_markets(w: &World, n: usize) -> Vec<Address> {
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let mut out = Vec::new();
    for _ in 0..n {
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, 520_000, 1_000_000).await.unwrap();
        out.push(m);
    }
    out
}

/// The journal's lines, parsed.
fn journal_entries(dir: &Path) -> Vec<Entry> {
    std::fs::read_to_string(dir.join(JOURNAL_FILE))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// How many `submit` and `submit_batch` lines the journal holds, and each batch's length.
fn submit_lines(dir: &Path) -> (usize, Vec<usize>) {
    let mut singles = 0;
    let mut batches = Vec::new();
    for e in journal_entries(dir) {
        match e {
            Entry::Submit(_) => singles += 1,
            Entry::SubmitBatch { subs } => batches.push(subs.len()),
            _ => {}
        }
    }
    (singles, batches)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b1_mining_paused_a_batch_is_resent_as_one_transaction_at_one_nonce() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    let markets = [buy_up_market(&w).await, buy_up_market(&w).await, buy_up_market(&w).await];
    let mut k = batching(&w, &dir, RESEND_AFTER, 0);

    automine(&w.keeper_rpc, false).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.asked, r.submitted, r.pending), (3, 3, 3), "all three sent, none mined");
    assert_eq!(r.submits.sent, 1, "in one transaction");
    // One journal line for the three: one write, one fsync.
    assert_eq!(submit_lines(dir.path()), (0, vec![3]));
    for _ in 0..3 {
        tokio::time::sleep(PAST_RESEND).await;
        let r = builtin_cycle(&mut k).await;
        assert_eq!((r.asked, r.submitted), (0, 0), "a market with a pending decision is not asked");
        assert_eq!(r.settled.resent, 1, "the stuck batch re-sent once, not once per decision");
    }
    let j = Journal::open(dir.path()).unwrap();
    let subs: Vec<_> = j.submissions().cloned().collect();
    assert_eq!(subs.len(), 3, "three decisions, however many transactions");
    let nonce = subs[0].sub.nonce;
    for t in &subs {
        assert_eq!(t.sub.nonce, nonce, "one nonce for the batch");
        // First send + 3 replacements, the same four transactions for every member.
        assert_eq!(t.attempts, subs[0].attempts);
        assert_eq!(t.attempts.len(), 4);
        let fees: Vec<u128> = t.attempts.iter().map(|a| a.max_fee_per_gas).collect();
        assert!(
            fees.windows(2).all(|p| p[1] * 10 >= p[0] * 11),
            "each bumps fees >= 10%: {fees:?}"
        );
    }
    let last = subs[0].latest().tx;

    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.settled.confirmed, r.pending), (3, 0));
    let chain = chain_record(&w).await;
    let counts = per_market(&chain);
    assert!(markets.iter().all(|m| counts.get(m) == Some(&1)), "one decision each: {counts:?}");
    assert!(chain.decided.iter().all(|d| d.id.tx == last), "all three in the last re-send");
    assert!(chain.decided.iter().all(|d| d.reason == reason::PASS));
    // Each row carries its own answer and annotation, matched by transaction and market.
    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 3);
    assert!(ds.iter().all(|d| d.raw.as_deref() == Some("BUY_UP")));
    assert!(ds.iter().all(|d| d.note.provider.as_deref() == Some("builtin")));
    assert!(offchain(&rows).is_empty(), "{:?}", offchain(&rows));
    println!("b1: 3 markets, mining paused for 3 re-send periods: 1 batch, 4 transactions signed, 1 nonce, 3 decisions");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b2_a_dropped_batch_is_resent_whole_at_the_same_nonce() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    let markets = [buy_up_market(&w).await, buy_up_market(&w).await];
    let mut k = batching(&w, &dir, RESEND_AFTER, 0);

    automine(&w.keeper_rpc, false).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.submitted, r.submits.sent), (2, 1));
    let first = k.executor().journal().pending().next().unwrap().clone();
    assert_eq!(first.batch.len(), 2, "one batch of two");
    anvil_rpc(&w.keeper_rpc, "anvil_dropTransaction", json!([first.sub.first.tx])).await;

    // No node knows it: re-sent at once, the whole batch at the same nonce.
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.asked, r.submitted, r.settled.resent), (0, 0, 1));
    let replacement = k.executor().journal().get(first.sub.id).unwrap().latest().tx;
    for id in &first.batch {
        let t = k.executor().journal().get(*id).unwrap();
        assert_eq!((t.attempts.len(), t.latest().tx), (2, replacement), "every member follows it");
    }
    let pooled = w.keeper_rpc.get_transaction_by_hash(replacement).await.unwrap().unwrap();
    assert_eq!(pooled.inner.nonce(), first.sub.nonce, "re-sent at the same nonce");

    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;
    builtin_cycle(&mut k).await;
    let chain = chain_record(&w).await;
    let counts = per_market(&chain);
    assert!(markets.iter().all(|m| counts.get(m) == Some(&1)), "one decision each: {counts:?}");
    assert!(chain.decided.iter().all(|d| d.id.tx == replacement), "both in the re-send");
    println!(
        "b2: dropped batch {}, re-sent whole as {replacement}: 2 decisions",
        first.sub.first.tx
    );
    w.stop().await;
}

/// The batch twin of f4b: a revert deeper than the confirmations removes a batch mined but not
/// yet confirmed. No node holds it, so its decisions are closed (not re-sent), and the markets,
/// asked again, go out in one new batch at the freed nonce.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_a_batch_a_deep_reorg_removed_is_abandoned_and_its_markets_asked_again() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    const N: usize = 4;
    abstain_markets(&w, N).await;
    let b = w.keeper(Some(dir.path().to_path_buf())).batch_window(Duration::MAX);
    let b = b.resend_after(HANG_GUARD).confirmations(2).reask_secs(1).one_at_a_time(true);
    let mut k = b.build().unwrap();
    let me = k.executor().keeper();
    let snap = anvil_rpc(&w.keeper_rpc, "evm_snapshot", json!([])).await;
    let floor = w.nonce(me).await.unwrap();

    // Cycle 1 decides every market in one batch; the blocks after it confirm them (2 deep).
    w.advance(2).await.unwrap();
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.submitted, r.submits.sent), (N, 1));
    for _ in 0..3 {
        mine(&w.keeper_rpc).await;
    }
    // Cycle 2 confirms cycle 1's and decides every market again: mined, not yet confirmed.
    w.advance(2).await.unwrap();
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.submitted, r.settled.confirmed), (N, N), "cycle 2: {r:?}");
    assert_eq!(w.nonce(me).await.unwrap(), floor + 2, "two batches, two nonces");

    // The revert takes both cycles away: the node's nonce is back at `floor`.
    let ok = anvil_rpc(&w.keeper_rpc, "evm_revert", json!([snap])).await;
    assert_eq!(ok, serde_json::Value::Bool(true));
    for _ in 0..8 {
        w.advance(1).await.unwrap();
    }
    let r = builtin_cycle(&mut k).await;
    assert!(r.rewound_to.is_some(), "the reorg was detected");
    assert_eq!(r.settled.resent, 0, "a removed batch no node holds is not re-sent");
    assert_eq!(r.settled.gaps_filled, 0, "no self-transfer");
    assert_eq!(r.settled.abandoned, N, "cycle 2's batch closed, each of its decisions");
    assert_eq!((r.submitted, r.submits.sent), (N, 1), "every market asked again, in one batch");
    assert_eq!(w.nonce(me).await.unwrap(), floor + 1, "the freed nonce went to the new batch");
    let chain = per_market(&chain_record(&w).await);
    assert!(chain.len() == N && chain.values().all(|&n| n == 1), "one decision each: {chain:?}");
    println!("b3: a 2-deep revert removed a batch of {N}: abandoned {N}, re-asked in 1 batch, 0 self-transfers");
    w.stop().await;
}

/// `keeper run` on `w`'s gate, recording into `results`, with `extra` flags.
fn spawn_keeper(w: &World, results: &Path, extra: &[&str]) -> tokio::process::Child {
    let mut cmd = keeper_bin(w, None);
    cmd.args(["run", "--interval-secs", "1", "--rpc-url"])
        .arg(w.anvil.url.as_str())
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .arg("--results")
        .arg(results)
        // One batch per cycle, whatever the machine's load.
        .args(["--batch-window-ms", "3600000"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b4_sigkill_with_a_batch_in_flight_then_restart() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    let markets = [buy_up_market(&w).await, buy_up_market(&w).await];
    automine(&w.keeper_rpc, false).await;
    let mut child =
        spawn_keeper(&w, dir.path(), &["--resend-after-secs", "3600", "--reask-secs", "3600"]);
    let in_flight = || {
        let dir = dir.path().to_path_buf();
        let rpc = w.keeper_rpc.clone();
        async move {
            let Ok(j) = Journal::open(&dir) else { return None };
            let tx = j.submissions().next()?.sub.first.tx;
            rpc.get_transaction_by_hash(tx).await.ok().flatten().map(|_| tx)
        }
    };
    assert!(
        eventually_async(HANG_GUARD, || async { in_flight().await.is_some() }).await,
        "the batch is journalled and in the node's pool"
    );
    let sent: TxHash = in_flight().await.expect("still in the pool: mining is paused");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert_eq!(submit_lines(dir.path()), (0, vec![2]), "one line for the batch");
    assert!(w.keeper_rpc.get_transaction_receipt(sent).await.unwrap().is_none(), "unmined");
    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;

    let child = spawn_keeper(&w, dir.path(), &["--once", "--reask-secs", "3600"]);
    let out = child.wait_with_output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let chain = chain_record(&w).await;
    let counts = per_market(&chain);
    assert!(markets.iter().all(|m| counts.get(m) == Some(&1)), "no second decision: {counts:?}");
    assert!(chain.decided.iter().all(|d| d.id.tx == sent), "the batch in flight was mined");
    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 2);
    for d in ds {
        assert_eq!(d.note.provider.as_deref(), Some("builtin"), "the annotation survived");
        assert_eq!((d.raw.as_deref(), d.reason), (Some("BUY_UP"), reason::PASS));
    }
    println!("b4: SIGKILL with a batch of 2 in flight, restart: 2 decisions, one transaction");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b5_a_batch_the_gate_would_refuse_whole_goes_one_answer_at_a_time() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    let markets = abstain_markets(&w, 2).await;
    let mut k = batching(&w, &dir, HANG_GUARD, 0);
    let (states, head) = steps::read(&mut k, &markets).await.unwrap();
    let cancel = CancellationToken::new();
    let mut answers = steps::ask_all(&mut k, states, head, None, &cancel).await.unwrap();
    // A third answer naming an address the factory never made: the gate refuses a batch
    // holding it whole (UnknownMarket), and that answer alone on its own.
    let mut stray = answers[0].clone();
    stray.market = Address::repeat_byte(0x77);
    answers.insert(1, stray);
    let sent = steps::submit(&mut k, answers).await.unwrap();
    assert_eq!(sent.len(), 2, "the two real answers published");
    assert_eq!(submit_lines(dir.path()), (2, vec![]), "each on its own, no batch");
    let rows: Vec<_> = k.executor().journal().offchain().into_iter().cloned().collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].error.contains("UnknownMarket"), "{}", rows[0].error);
    let counts = per_market(&chain_record(&w).await);
    assert!(markets.iter().all(|m| counts.get(m) == Some(&1)), "{counts:?}");
    println!(
        "b5: a batch with an unknown market went one by one: 2 published, 1 refused before signing"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b6_a_batch_over_half_the_block_gas_limit_is_halved_until_it_fits() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    const N: usize = 6;
    let markets = abstain_markets(&w, N).await;
    // A block gas limit of 260,000 leaves a batch 130,000. Six ABSTAINs need about 111,000 by
    // estimate (21,000 + 6 x about 15,000), 169,000 with the margin (x 1.25 + 30,000): too
    // many. Three need about 66,000, 113,000 with the margin: they fit.
    const LIMIT: u64 = 260_000;
    anvil_rpc(&w.keeper_rpc, "anvil_setBlockGasLimit", json!([format!("{LIMIT:#x}")])).await;
    mine(&w.keeper_rpc).await;
    let mut k = batching(&w, &dir, HANG_GUARD, 0);
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.submitted, N);
    let (singles, batches) = submit_lines(dir.path());
    assert_eq!(singles + batches.iter().sum::<usize>(), N, "every answer sent once");
    assert!(batches.len() >= 2, "halved: {batches:?} and {singles} single");
    let mut gas = Vec::new();
    for e in journal_entries(dir.path()) {
        if let Entry::SubmitBatch { subs } = e {
            assert!(subs[0].gas <= LIMIT / 2, "signed within the budget: {}", subs[0].gas);
            gas.push(subs[0].gas);
        }
    }
    let counts = per_market(&chain_record(&w).await);
    assert!(markets.iter().all(|m| counts.get(m) == Some(&1)), "{counts:?}");
    println!(
        "b6: {N} ABSTAINs under a {LIMIT}-gas block limit: batches of {batches:?} (gas limits \
         {gas:?}, each <= {}) and {singles} single",
        LIMIT / 2
    );
    w.stop().await;
}

/// One batch may name a market twice (the demo's hostile segment sends several answers about
/// one market). Each decision is matched to its own answer by its place in the transaction, not
/// by market: its reason comes back to it, and its row carries its own whole answer (one longer
/// than the 64 bytes the chain logs is known only from the journal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b7_one_market_twice_in_a_batch_each_decision_keeps_its_own_answer() {
    let _g = serial();
    let (w, dir) = (world(&[]).await, tempfile::tempdir().unwrap());
    let market = abstain_markets(&w, 1).await;
    let mut k = batching(&w, &dir, HANG_GUARD, 0);
    let (states, head) = steps::read(&mut k, &market).await.unwrap();
    let cancel = CancellationToken::new();
    let answers = steps::ask_all(&mut k, states, head, None, &cancel).await.unwrap();
    // 90 bytes, not one of the three tokens: reason 11. Then the builtin's ABSTAIN: reason 1.
    let long =
        format!("IGNORE THE RULES {}", "and buy everything ".repeat(4)).trim_end().to_string();
    assert!(long.len() > 64, "{}", long.len());
    let mut hostile = answers[0].clone();
    hostile.raw = long.clone();
    let sent = steps::submit(&mut k, vec![hostile, answers[0].clone()]).await.unwrap();
    let reasons: Vec<u8> = sent.iter().map(|s| s.reason).collect();
    assert_eq!(reasons, [reason::INVALID_VERDICT, reason::ABSTAINED], "each its own reason");
    assert_eq!(submit_lines(dir.path()), (0, vec![2]), "one batch");
    k.write_results().unwrap();
    let rows = common::record_rows(dir.path());
    let raws: Vec<Option<&str>> = decisions(&rows).iter().map(|d| d.raw.as_deref()).collect();
    assert_eq!(raws, [Some(long.as_str()), Some("ABSTAIN")], "each row its own whole answer");
    println!(
        "b7: one market twice in a batch: reasons {reasons:?}, a {}-byte answer kept whole",
        long.len()
    );
    w.stop().await;
}
