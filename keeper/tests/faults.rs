//! The fault matrix of issue 8, items 1-6 and 10, against a real anvil and the real compiled
//! contracts: paused mining, a dropped transaction, a base-fee spike, a reorganisation, a
//! SIGKILL with a transaction in flight, a node gone past `--max-outage`, and a second gate on
//! the same factory. Chain time never depends on the wall clock here: every block is 1 s after
//! the one before (`common::world`), and blocks are mined on demand (automine off where order
//! matters). Wall-clock sleeps only make a re-send due (it can only become more due as time
//! passes), and waits for a child process are hang guards; neither decides an outcome.
// Each test runs on its own runtime; the std lock held across awaits is exactly what serialises
// them (no task inside one runtime ever contends for it).
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    primitives::{Address, TxHash, U256},
    providers::Provider,
};
use common::{
    anvil_rpc, artifacts, automine, decisions, eventually, eventually_async, mine, offchain,
    params, root, serial, world, HANG_GUARD,
};
use keeper::{
    bindings::{reason, IRiskGate},
    deploy::{self, GateSpec},
    dev::world::{Actor, World},
    journal::{Journal, Outcome},
    recorder::feed::{self, ChainRecord, FeedRow},
    runner::{CycleReport, Keeper},
    strategy::Model,
};
use serde_json::json;
use std::{collections::BTreeMap, path::Path, process::Stdio, time::Duration};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A re-send becomes due once `resend_after` has passed since the last send; sleeping longer
/// makes it due whatever the machine's load.
const RESEND_AFTER: Duration = Duration::from_millis(300);
const PAST_RESEND: Duration = Duration::from_millis(400);
/// For the tests that are not about re-sending: a cycle waits this long for its own
/// transactions only if they cannot be mined, and returns the moment they are, so a slow
/// machine never turns "not mined yet" into a re-send.
const NO_RESEND: Duration = HANG_GUARD;

/// A world (gate deployed and funded, chain time pinned) and an empty results folder.
async fn start() -> (World, TempDir) {
    (world(&[]).await, tempfile::tempdir().unwrap())
}

/// A keeper on `w`'s gate keeping its journal and feed in `dir`, re-sending after
/// `resend_after`.
fn keeper(w: &World, dir: &TempDir, resend_after: Duration) -> Keeper {
    let mut k = w.keeper(Some(dir.path().to_path_buf()));
    k.resend_after = resend_after;
    k.load_existing_feed().unwrap();
    k
}

/// One cycle with the builtin model (never cancelled).
async fn cycle(k: &mut Keeper) -> CycleReport {
    k.cycle(&Model::Builtin, None, &CancellationToken::new()).await.unwrap()
}

/// Mining stops: transactions wait in the pool until [`resume_mining`].
async fn pause_mining(w: &World) {
    automine(&w.keeper_rpc, false).await;
}

/// Mining resumes, and one block takes whatever the pool held.
async fn resume_mining(w: &World) {
    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;
}

/// A market whose only book is an ask at 0.40: the builtin model answers BUY_UP, which the gate
/// passes (0.40 is inside [0.05, 0.95], the position caps are far).
async fn buy_up_market(w: &World) -> Address {
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m = w.create_market(10_000, 100, 0, expiry).await.unwrap();
    w.ask(m, 400_000, 20_000_000).await.unwrap();
    m
}

/// The gate's decisions as the chain holds them, read independently of any keeper state.
async fn chain_record(w: &World) -> ChainRecord {
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    keeper::report::read_chain_record(
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

/// The chain's record, asserted to be the one the keeper keeps: the same decisions (market,
/// block, time, reason, position state), the same transactions and log indexes.
async fn chain_is_record(w: &World, k: &Keeper) -> ChainRecord {
    let chain = chain_record(w).await;
    assert_eq!(k.record.decided, chain.decided, "the keeper's record is exactly the chain's");
    let rows = |ds: &[feed::DecisionRow]| -> Vec<(String, u64)> {
        ds.iter().map(|d| (d.tx.clone(), d.log_index)).collect()
    };
    assert_eq!(rows(&k.record.decisions), rows(&chain.decisions), "and so are its rows");
    chain
}

/// Decisions per market.
fn per_market(record: &ChainRecord) -> BTreeMap<Address, usize> {
    let mut m = BTreeMap::new();
    for d in &record.decided {
        *m.entry(d.market).or_insert(0) += 1;
    }
    m
}

/// The feed the keeper wrote in `dir`.
fn feed_rows(dir: &Path) -> Vec<FeedRow> {
    feed::read_feed(&dir.join("feed.jsonl")).unwrap()
}

/// The keeper binary (`--root` the repository unless `root` is given) signing as `w`'s keeper,
/// with no other KEEPER_* setting inherited from the environment.
fn keeper_bin(w: &World, root_dir: Option<&Path>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(root_dir.map_or_else(root, Path::to_path_buf));
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap()).kill_on_drop(true);
    cmd
}

/// `keeper run` on `w`'s gate, recording into `results`, every second, with `extra` flags;
/// stderr piped (read it with `wait_with_output`).
fn spawn_keeper(w: &World, results: &Path, extra: &[&str]) -> tokio::process::Child {
    keeper_bin(w, None)
        .args(["run", "--interval-secs", "1", "--rpc-url"])
        .arg(w.anvil.url.as_str())
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .arg("--results")
        .arg(results)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_mining_paused_past_the_resend_time_gives_one_decision_per_market() {
    let _g = serial();
    let (w, dir) = start().await;
    let (a, b) = (buy_up_market(&w).await, buy_up_market(&w).await);
    let mut k = keeper(&w, &dir, RESEND_AFTER);

    pause_mining(&w).await;
    let r = cycle(&mut k).await;
    assert_eq!((r.asked, r.submitted, r.pending), (2, 2, 2), "both sent, neither mined");
    // Mining stays paused for several re-send periods: each cycle re-sends the stuck pair at
    // their own nonces with bumped fees, and never asks those markets again.
    for _ in 0..3 {
        tokio::time::sleep(PAST_RESEND).await;
        let r = cycle(&mut k).await;
        assert_eq!(
            (r.asked, r.submitted),
            (0, 0),
            "a market with a pending submission is never asked"
        );
        assert_eq!(r.settled.resent, 2, "both stuck transactions re-sent");
    }
    let j = Journal::open(dir.path()).unwrap();
    let subs: Vec<_> = j.submissions().cloned().collect();
    assert_eq!(subs.len(), 2, "two submissions, however many transactions");
    for t in &subs {
        // First send + 3 replacements, all at the submission's one nonce (a replacement is the
        // same nonce by construction: the journal records one nonce per submission).
        assert_eq!(t.attempts.len(), 4);
        let fees: Vec<u128> = t.attempts.iter().map(|a| a.max_fee_per_gas).collect();
        assert!(
            fees.windows(2).all(|p| p[1] * 10 >= p[0] * 11),
            "each re-send bumps fees >= 10%: {fees:?}"
        );
    }
    println!("f1: 2 markets, mining paused for 3 re-send periods: 2 submissions, 8 transactions signed, 2 nonces");

    resume_mining(&w).await;
    let r = cycle(&mut k).await;
    assert_eq!(r.settled.confirmed, 2);
    assert_eq!(r.pending, 0);
    let chain = chain_is_record(&w, &k).await;
    let counts = per_market(&chain);
    assert_eq!(counts.get(&a), Some(&1), "exactly one decision for A: {counts:?}");
    assert_eq!(counts.get(&b), Some(&1), "exactly one decision for B: {counts:?}");
    assert_eq!(chain.decided.len(), 2);
    // The feed on disk says the same, with no "no receipt" rows.
    let rows = feed_rows(dir.path());
    assert_eq!(decisions(&rows).len(), 2);
    assert!(offchain(&rows).is_empty(), "{:?}", offchain(&rows));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f2_a_dropped_transaction_is_resent_at_the_same_nonce() {
    let _g = serial();
    let (w, dir) = start().await;
    let a = buy_up_market(&w).await;
    let mut k = keeper(&w, &dir, RESEND_AFTER);

    pause_mining(&w).await;
    let r = cycle(&mut k).await;
    assert_eq!(r.submitted, 1);
    let first = k.journal().pending().next().unwrap().clone();
    let nonce = first.sub.nonce;
    anvil_rpc(&w.keeper_rpc, "anvil_dropTransaction", json!([first.sub.first.tx])).await;
    assert!(
        w.keeper_rpc.get_transaction_by_hash(first.sub.first.tx).await.unwrap().is_none(),
        "the node forgot it"
    );

    // The node no longer knows it: re-sent at once, at the same nonce.
    let r = cycle(&mut k).await;
    assert_eq!((r.asked, r.submitted, r.settled.resent), (0, 0, 1));
    let t = k.journal().get(first.sub.id).unwrap().clone();
    assert_eq!(t.attempts.len(), 2);
    let replacement = t.latest().tx;
    let pooled =
        w.keeper_rpc.get_transaction_by_hash(replacement).await.unwrap().expect("in the pool");
    use alloy::consensus::Transaction as _;
    assert_eq!(pooled.inner.nonce(), nonce, "re-sent at the same nonce, never a new one");

    resume_mining(&w).await;
    cycle(&mut k).await;
    let chain = chain_is_record(&w, &k).await;
    assert_eq!(per_market(&chain).get(&a), Some(&1), "one decision");
    assert_eq!(chain.decided[0].id.tx, replacement);
    println!(
        "f2: dropped tx {}, re-sent as {replacement} at nonce {nonce}: 1 decision",
        first.sub.first.tx
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f3_a_base_fee_spike_is_met_by_a_bumped_replacement() {
    let _g = serial();
    let (w, dir) = start().await;
    let a = buy_up_market(&w).await;
    let mut k = keeper(&w, &dir, RESEND_AFTER);

    pause_mining(&w).await;
    cycle(&mut k).await;
    let sent = k.journal().pending().next().unwrap().clone();
    // The base fee jumps far above what the transaction pays: 1,000 gwei against a max fee of
    // twice the ~1 gwei estimate at signing.
    let spike: u128 = 1_000_000_000_000;
    assert!(sent.sub.first.max_fee_per_gas < spike);
    anvil_rpc(&w.keeper_rpc, "anvil_setNextBlockBaseFeePerGas", json!([U256::from(spike)])).await;
    mine(&w.keeper_rpc).await;
    assert!(
        w.keeper_rpc.get_transaction_receipt(sent.sub.first.tx).await.unwrap().is_none(),
        "underpriced: not mined in the spiked block"
    );
    tokio::time::sleep(PAST_RESEND).await;
    let r = cycle(&mut k).await;
    assert_eq!(r.settled.resent, 1);
    let t = k.journal().get(sent.sub.id).unwrap().clone();
    let bumped = t.latest();
    // The next block's base fee after an empty spiked block is at least 7/8 of the spike; the
    // replacement pays at least twice the estimate of it, so it is mineable.
    assert!(
        bumped.max_fee_per_gas >= spike * 7 / 8,
        "replacement max fee {} meets the spike",
        bumped.max_fee_per_gas
    );
    resume_mining(&w).await;
    cycle(&mut k).await;
    let chain = chain_is_record(&w, &k).await;
    assert_eq!(per_market(&chain).get(&a), Some(&1));
    assert_eq!(chain.decided[0].id.tx, bumped.tx, "the bumped replacement is the one mined");
    println!(
        "f3: base fee spiked to {spike} wei; first max fee {}, replacement {}: 1 decision",
        sent.sub.first.max_fee_per_gas, bumped.max_fee_per_gas
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f4_a_reorg_removes_a_decision_and_a_market_and_the_record_follows_the_chain() {
    let _g = serial();
    let (w, dir) = start().await;
    let a = buy_up_market(&w).await;
    let mut k = keeper(&w, &dir, NO_RESEND);

    let snap = anvil_rpc(&w.keeper_rpc, "evm_snapshot", json!([])).await;
    // On the branch about to be removed: market C is created, and A and C are decided.
    let c = buy_up_market(&w).await;
    let r = cycle(&mut k).await;
    assert_eq!(r.submitted, 2);
    assert_eq!(per_market(&k.record).len(), 2);
    let removed: Vec<TxHash> = k.record.decided.iter().map(|d| d.id.tx).collect();

    // The branch is replaced: back to the snapshot, then a longer branch in which market D is
    // created (and C never exists).
    let ok = anvil_rpc(&w.keeper_rpc, "evm_revert", json!([snap])).await;
    assert_eq!(ok, serde_json::Value::Bool(true));
    for _ in 0..3 {
        mine(&w.keeper_rpc).await;
    }
    // Created by another account (anyone may create a market), naming the trusted maker.
    let expiry = w.chain_time().await.unwrap() + 2 * 86_400;
    let d =
        w.create_market_as(Actor::Outsider, 10_000, 100, 0, expiry, w.maker_addr).await.unwrap();
    w.ask_as(Actor::Outsider, d, 400_000, 20_000_000).await.unwrap();
    for _ in 0..3 {
        mine(&w.keeper_rpc).await;
    }
    let r = cycle(&mut k).await;
    assert!(r.rewound_to.is_some(), "the reorg was detected");
    assert_eq!(r.settled.reorged, 2, "both confirmed decisions reopened");
    let chain = chain_is_record(&w, &k).await;
    let counts = per_market(&chain);
    assert_eq!(counts.get(&a), Some(&1), "A asked again on the new branch: {counts:?}");
    assert_eq!(counts.get(&d), Some(&1), "D, created in the new branch, found and decided");
    // The factory's nonce went back with the revert, so D was created at the address C had:
    // the keeper must know the market the chain has there now (D's expiry, D's creator's
    // book), not the one it read on the removed branch.
    assert_eq!(c, d, "CREATE addresses repeat after a revert");
    let known = k.markets().into_iter().find(|m| m.address == d).expect("D is known");
    assert_eq!(known.expiry, expiry, "the market at that address is D, not the removed C");
    assert_eq!(k.markets().len(), 2, "A and D; C's entry left with its block");
    for tx in &removed {
        assert!(
            !k.record.decided.iter().any(|d| d.id.tx == *tx),
            "removed decision {tx} left the record"
        );
    }
    let rows = feed_rows(dir.path());
    assert_eq!(decisions(&rows).len(), 2, "the feed holds the new branch's two decisions only");
    let j = Journal::open(dir.path()).unwrap();
    let gone = j.submissions().filter(|t| matches!(t.outcome, Some((Outcome::NotSent, _)))).count();
    assert_eq!(gone, 2, "the removed submissions are closed, their nonces reused");
    println!(
        "f4: reorg at block {:?}: 2 decisions and 1 market removed; A re-asked, D found",
        r.rewound_to
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f5_sigkill_with_a_transaction_in_flight_then_restart() {
    let _g = serial();
    let (w, dir) = start().await;
    let a = buy_up_market(&w).await;
    pause_mining(&w).await;
    let mut child =
        spawn_keeper(&w, dir.path(), &["--resend-after-secs", "3600", "--reask-secs", "3600"]);
    // The journal has the submission before it is sent: wait until the node's pool holds it
    // too, so the kill below always lands with the transaction in flight.
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
        "the submission is journalled and in the node's pool"
    );
    let sent = in_flight().await.expect("still in the pool: mining is paused");
    // Killed with its transaction in the node's pool, unmined.
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(w.keeper_rpc.get_transaction_receipt(sent).await.unwrap().is_none(), "unmined");
    resume_mining(&w).await;

    let child = spawn_keeper(&w, dir.path(), &["--once", "--reask-secs", "3600"]);
    let out = child.wait_with_output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let chain = chain_record(&w).await;
    assert_eq!(per_market(&chain).get(&a), Some(&1), "no second submission");
    assert_eq!(chain.decided.len(), 1);
    assert_eq!(chain.decided[0].id.tx, sent, "the transaction in flight at the kill was mined");
    let rows = feed_rows(dir.path());
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].note.provider.as_deref(), Some("builtin"), "the annotation survived the kill");
    assert!(ds[0].note.model.is_some() && ds[0].note.strategy_hash.is_some());
    assert_eq!(ds[0].raw.as_deref(), Some("BUY_UP"));
    assert_eq!(ds[0].reason, reason::PASS);
    println!("f5: SIGKILL with 1 tx in flight, restart: 1 decision, annotation kept");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f6_node_gone_past_max_outage_exits_nonzero_with_every_row_on_disk() {
    let _g = serial();
    let (w, dir) = start().await;
    buy_up_market(&w).await;
    buy_up_market(&w).await;
    // The model is unreachable (a closed loopback port): each market is an off-chain row.
    let dead = keeper::anvil::free_port().unwrap();
    let url = format!("http://127.0.0.1:{dead}");
    let child = spawn_keeper(
        &w,
        dir.path(),
        &[
            "--model",
            "openai",
            "--openai-url",
            &url,
            "--openai-model",
            "m",
            "--inference-timeout-secs",
            "2",
            "--reask-secs",
            "1",
            "--max-outage-secs",
            "3",
        ],
    );
    let journal = dir.path().join("journal.jsonl");
    assert!(
        eventually(HANG_GUARD, || std::fs::read_to_string(&journal)
            .is_ok_and(|t| t.matches("\"kind\":\"offchain\"").count() >= 2))
        .await,
        "off-chain rows journalled"
    );
    // The node goes away for good.
    w.stop().await;
    let out =
        tokio::time::timeout(HANG_GUARD, child.wait_with_output()).await.expect("exits").unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "non-zero exit past --max-outage: {err}");
    assert!(err.contains("max-outage"), "{err}");
    let j = Journal::open(dir.path()).unwrap();
    let rows = feed_rows(dir.path());
    assert!(j.offchain().len() >= 2);
    assert_eq!(
        offchain(&rows).len(),
        j.offchain().len(),
        "every journalled off-chain row is in the feed"
    );
    println!(
        "f6: node gone; exit {:?} after --max-outage 3 s; {} off-chain rows on disk",
        out.status.code(),
        j.offchain().len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f10_a_second_gate_on_the_same_factory_finds_older_markets_and_its_own_folder() {
    let _g = serial();
    let w = world(&[]).await;
    let older = buy_up_market(&w).await;
    // Gate 2: same collateral and factory, deployed after `older` was created.
    let spec = GateSpec {
        params: params(),
        trusted_resolvers: vec![w.maker_addr],
        collateral: Some(w.deployment.collateral),
        factory: Some(w.deployment.factory),
        keeper: w.keeper_addr,
    };
    let second = deploy::deploy_all(&w.keeper_rpc, w.deployment.chain_id, &artifacts(), &spec)
        .await
        .unwrap();
    assert!(second.deploy_block > 0 && second.gate != w.deployment.gate);
    w.mint(second.gate, U256::from(100_000_000u64)).await.unwrap();
    let tmp_root = tempfile::tempdir().unwrap();
    for gate in [w.deployment.gate, second.gate] {
        let out = keeper_bin(&w, Some(tmp_root.path()))
            .args(["run", "--once", "--rpc-url"])
            .arg(w.anvil.url.as_str())
            .arg("--gate")
            .arg(gate.to_string())
            .arg("--from-block")
            .arg(second.deploy_block.to_string())
            .output()
            .await
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let folder = |g: Address| {
        tmp_root
            .path()
            .join("results")
            .join(w.deployment.chain_id.to_string())
            .join(g.to_checksum(None))
    };
    for gate in [w.deployment.gate, second.gate] {
        let rows =
            feed::read_feed_for(&folder(gate).join("feed.jsonl"), w.deployment.chain_id, gate)
                .unwrap();
        let ds = decisions(&rows);
        assert_eq!(ds.len(), 1, "gate {gate} decided the older market once");
        assert_eq!(ds[0].market, older.to_checksum(None));
        assert!(rows
            .iter()
            .all(|r| matches!(r, FeedRow::Decision(d) if d.gate == gate.to_checksum(None))
                || matches!(r, FeedRow::Offchain(_))));
    }
    assert!(
        !tmp_root.path().join("results").join("feed.jsonl").exists(),
        "results/ itself is the demo's"
    );
    let g2 = IRiskGate::new(second.gate, &w.keeper_rpc);
    assert_eq!(g2.marketFactory().call().await.unwrap(), w.deployment.factory);
    println!("f10: second gate deployed at block {} found market #0 created before it; folders results/31337/<gate>/", second.deploy_block);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmations_keep_a_decision_out_of_the_record_until_it_is_buried() {
    let _g = serial();
    let (w, dir) = start().await;
    let a = buy_up_market(&w).await;
    let mut k = keeper(&w, &dir, NO_RESEND).with_confirmations(2);
    // Automine: the submission is mined in the block after the read, which is the head: 0 blocks
    // above it, so it stays out of the record (and the market stays pending, never re-asked).
    // The cycle waits until it is mined, so the blocks mined below are all above it.
    let r = cycle(&mut k).await;
    assert_eq!((r.submitted, r.pending), (1, 1));
    assert!(k.record.decided.is_empty(), "mined at the head: not confirmed");
    mine(&w.keeper_rpc).await; // 1 block above it: head - 2 is still below it
    let r = cycle(&mut k).await;
    assert_eq!((r.asked, r.pending), (0, 1));
    assert!(k.record.decided.is_empty(), "1 confirmation of 2");
    mine(&w.keeper_rpc).await; // 2 blocks above it: head - 2 is its block
    let r = cycle(&mut k).await;
    assert_eq!((r.asked, r.pending, r.settled.confirmed), (0, 0, 1));
    assert_eq!(per_market(&k.record).get(&a), Some(&1));
    chain_is_record(&w, &k).await;
    println!("confirmations 2: the decision entered the record once 2 blocks were mined above it");
    w.stop().await;
}
