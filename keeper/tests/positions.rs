//! The keeper's own transactions (redeem, writeOff) are held to the rule its submissions keep: a
//! stuck one is re-sent at the SAME nonce with bumped fees, never at a new one. Adversary: a
//! flaky or congested network (a base-fee spike the first signing did not pay for). A redeem
//! re-sent at a new nonce would sit behind the stuck one, and every later transaction of the
//! keeper (its submissions too) would wait behind both. Real anvil, real compiled contracts;
//! chain time pinned (`common::world`) and blocks mined on demand; the one wall-clock sleep only
//! makes a re-send due (it can only become more due as time passes).
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    primitives::{TxHash, U256},
    providers::Provider,
    rpc::types::Filter,
    sol_types::SolEvent,
};
use common::{anvil_rpc, automine, builtin_cycle, buy_up_market, mine, serial, world};
use keeper::{
    chain::journal::OwnKind, dev::world::World, engine::Engine, kit::bindings::IRiskGate,
};
use serde_json::json;
use std::time::Duration;

const RESEND_AFTER: Duration = Duration::from_millis(300);
const PAST_RESEND: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_redeem_is_resent_at_its_own_nonce_and_settles_once() {
    let _g = serial();
    let Stuck { w, dir: _dir, mut k, n, first } = stuck_redeem().await;
    let spike = SPIKE;

    // Past --resend-after, the next cycle re-signs it at the same nonce n, with fees that meet
    // the chain's ask now; nothing is sent at n + 1.
    tokio::time::sleep(PAST_RESEND).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.redeemed, 0);
    let second = pool_tx_at(&w, n).await.expect("a replacement at the same nonce");
    assert_ne!(second, first, "re-signed with other fees, so another hash");
    assert_eq!(pool_tx_at(&w, n + 1).await, None, "never a second redeem at a new nonce");

    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.redeemed, 1, "the replacement is mined and counted once");
    assert!(k.record().unwrap().open_positions(true).is_empty(), "the position is closed");
    // One Settled log for the market, in the replacement's transaction; the keeper used exactly
    // one nonce for it: n + 1 after, no transaction at n + 1 or later.
    let logs = w
        .keeper_rpc
        .get_logs(
            &Filter::new()
                .address(w.deployment.gate)
                .event_signature(IRiskGate::Settled::SIGNATURE_HASH)
                .from_block(0),
        )
        .await
        .unwrap();
    assert_eq!(logs.len(), 1, "settled once");
    assert_eq!(logs[0].transaction_hash, Some(second), "by the replacement");
    let after = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    assert_eq!(after, n + 1, "one nonce for one redeem");
    println!(
        "positions: redeem stuck under a {spike} wei base fee: re-sent at nonce {n} ({first} -> {second}), settled once"
    );
    w.stop().await;
}

/// The base fee of the block the redeem is first offered to: far above what it was signed for.
const SPIKE: u128 = 1_000_000_000_000;

/// A keeper journalling in `dir`, re-sending after [`RESEND_AFTER`].
fn keeper_at(w: &World, dir: &tempfile::TempDir) -> Engine {
    let k = w.keeper(Some(dir.path().to_path_buf())).resend_after(RESEND_AFTER);
    k.resume().build().unwrap()
}

/// A world, its keeper (journalling in `dir`) and the keeper's redeem at nonce `n`, stuck.
struct Stuck {
    w: World,
    dir: tempfile::TempDir,
    k: Engine,
    n: u64,
    first: TxHash,
}

/// The keeper buys into a market whose only ask is at 0.40 (the builtin model answers BUY_UP
/// and the gate passes it); the market resolves, and the keeper's redeem is left stuck in the
/// pool: signed at the estimate, offered to a block whose base fee is [`SPIKE`], not mined.
/// Mining stays paused.
async fn stuck_redeem() -> Stuck {
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let m = buy_up_market(&w).await;
    let mut k = keeper_at(&w, &dir);
    let expiry =
        keeper::kit::bindings::IBinaryMarket::new(m, &w.keeper_rpc).expiry().call().await.unwrap();
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.submitted, 1, "one BUY_UP submitted");
    assert_eq!(
        k.record().unwrap().open_positions(true),
        vec![m],
        "and it filled: one open position"
    );

    // The market expires and resolves (the maker is its trusted resolver).
    w.mine_at(expiry + 1).await.unwrap();
    w.resolve(m, true).await.unwrap();
    let n = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();

    // Mining stops and the next block's base fee jumps to 1,000 gwei: the redeem the keeper
    // signs at its estimate (twice ~1 gwei) cannot be mined in it.
    automine(&w.keeper_rpc, false).await;
    let spike = SPIKE;
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.redeemed, 0, "not mined while mining is paused");
    let first = pool_tx_at(&w, n).await.expect("the redeem waits in the pool at the next nonce");
    anvil_rpc(&w.keeper_rpc, "anvil_setNextBlockBaseFeePerGas", json!([U256::from(spike)])).await;
    mine(&w.keeper_rpc).await;
    assert!(
        w.keeper_rpc.get_transaction_receipt(first).await.unwrap().is_none(),
        "underpriced: not mined in the spiked block"
    );

    Stuck { w, dir, k, n, first }
}

/// After a restart, the journal still knows the stuck redeem: the new process re-signs it at
/// its own nonce (due at once: this process never sent it), never a second redeem at a new
/// nonce, and it settles once. Adversary: a crash between sending a redeem and its mining.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redeem_stuck_across_a_restart_is_resent_at_its_own_nonce() {
    let _g = serial();
    let Stuck { w, dir, k, n, first } = stuck_redeem().await;
    drop(k);

    let mut k = keeper_at(&w, &dir);
    let own: Vec<_> = k.executor().journal().own_pending().map(|o| o.call.clone()).collect();
    assert_eq!(own.len(), 1, "the journal holds the redeem across the restart");
    assert_eq!((own[0].what, own[0].nonce), (OwnKind::Redeem, n));
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.redeemed, 0, "mining is paused");
    let second = pool_tx_at(&w, n).await.expect("re-signed at the same nonce");
    assert_ne!(second, first, "with bumped fees, so another hash");
    assert_eq!(pool_tx_at(&w, n + 1).await, None, "never a second redeem at a new nonce");

    automine(&w.keeper_rpc, true).await;
    mine(&w.keeper_rpc).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!(r.redeemed, 1, "the replacement is mined and counted once");
    assert!(k.record().unwrap().open_positions(true).is_empty());
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), n + 1);
    assert_eq!(k.executor().journal().own_pending().count(), 0, "settled in the journal");
    println!(
        "positions: redeem stuck across a restart: re-sent at nonce {n} ({first} -> {second})"
    );
    w.stop().await;
}

/// The hash of the keeper's transaction at `nonce` waiting in the node's pool, if any.
async fn pool_tx_at(w: &World, nonce: u64) -> Option<alloy::primitives::TxHash> {
    let content: serde_json::Value =
        w.keeper_rpc.raw_request("txpool_content".into(), ()).await.unwrap();
    let from = format!("{:#x}", w.keeper_addr);
    let pending = content["pending"].as_object()?;
    let (_, txs) = pending.iter().find(|(k, _)| k.to_lowercase() == from)?;
    let tx = &txs[nonce.to_string()];
    tx["hash"].as_str().map(|h| h.parse().unwrap())
}
