//! Issue 14's gas attack on a real anvil, by real transactions: 64 resting asks from 64 distinct
//! maker addresses ahead of real liquidity inside the keeper's limit. The keeper must publish a
//! row (or write an off-chain row with the cause) and never sign a transaction that reverts:
//! the gas its key spent is exactly the gas of its mined receipts, none of them status 0.
//!
//! Two books:
//! - A, the book: 64 one-lot (100-unit) asks at 0.40, then 20 units of real liquidity at
//!   0.40, on a grid with no minimum size. One IOC at the match cap fills at most 64 × 100 =
//!   6,400 of 10,000,000, below the 25 % minimum, so the gate would refuse it up front (rule 20).
//!   The keeper reads that from the grid (`domain::grid`) and never asks about A: no ask, no
//!   row, no gas (issue 32, item 3).
//! - B, the worst case for gas: a grid whose minimum size (40,000) lets 64 matches reach the
//!   minimum fill (64 × 40,000 = 2,560,000 ≥ 25 % of 10,000,000 = 2,500,000); 64 makers each
//!   rest one minimum-size ask on a level of its own (0.300, 0.301, ..., 0.363), then 20 units
//!   of real liquidity at 0.364, all inside the keeper's limit (0.300 × 1.25 = 0.375). The IOC
//!   stops at the match cap having filled 2,560,000: a PASS whose gas is the worst one take can
//!   cost, which the keeper's cap (`sender::SUBMIT_GAS_WORST_IOC`) must cover.
//!
//! Then the gate is paused and a third market asked about: the estimate reverts (`GatePaused`),
//! so the row is off chain, with the decoded revert, and nothing is signed.
// One test at a time per binary (`common::serial`), held across awaits on purpose.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    eips::BlockNumberOrTag,
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
};
use common::{builtin_cycle, decisions, offchain, serial, world};
use futures::{stream, StreamExt};
use keeper::{
    chain::sender,
    commands::market::{self, UpOrder},
    dev::world::World,
    kit::bindings::{reason, IRiskGate, ITestCollateral},
};

/// A maker's signing provider and the asks it rests: (market, UP price, quantity).
type Seeded = (DynProvider, Vec<(Address, u64, u64)>);

/// Distinct maker addresses, as the attacker used.
const MAKERS: usize = 64;

/// Deterministic maker keys (keccak256 of a label), funded with ETH and collateral.
async fn makers(w: &World) -> Vec<(Address, DynProvider)> {
    w.extra_makers("riskgate gas test maker", MAKERS, U256::from(1_000_000_000u64)).await.unwrap()
}

/// Each maker approves `markets` (makers concurrently), then rests `asks(i)` (market, UP
/// price, quantity), one order at a time.
async fn seed(
    w: &World,
    makers: &[(Address, DynProvider)],
    markets: &[Address],
    asks: impl Fn(usize) -> Vec<(Address, u64, u64)>,
) {
    let collateral = w.deployment.collateral;
    let jobs = makers.iter().enumerate().map(|(i, (_, p))| {
        let asks = asks(i);
        let p = p.clone();
        async move {
            let c = ITestCollateral::new(collateral, &p);
            for m in markets {
                let tx = c.approve(*m, U256::MAX).send().await.unwrap();
                tx.get_receipt().await.unwrap();
            }
            (p, asks)
        }
    });
    let ready: Vec<Seeded> = stream::iter(jobs).buffer_unordered(8).collect().await;
    // Placements one at a time: each is signed at its own estimate, and another maker's order
    // landing first on the same book could change what it costs.
    for (p, asks) in ready {
        for (m, price, qty) in asks {
            market::place(&p, m, UpOrder { is_bid: false, up_price: price, qty }).await.unwrap();
        }
    }
}

/// The keeper key's transactions in blocks `[from, to]`: (gas used × effective gas price, gas
/// used, status, the gas limit it was signed with) of each.
async fn keeper_receipts(w: &World, from: u64, to: u64) -> Vec<(U256, u64, bool, u64)> {
    let mut out = Vec::new();
    for n in from..=to {
        let block = w
            .keeper_rpc
            .get_block_by_number(BlockNumberOrTag::Number(n))
            .full()
            .await
            .unwrap()
            .expect("block exists");
        for tx in block.transactions.txns() {
            if tx.inner.signer() != w.keeper_addr {
                continue;
            }
            let r = w.keeper_rpc.get_transaction_receipt(*tx.inner.tx_hash()).await.unwrap();
            let r = r.expect("a mined transaction has a receipt");
            let paid = U256::from(r.gas_used) * U256::from(r.effective_gas_price);
            out.push((
                paid,
                r.gas_used,
                r.status(),
                alloy::consensus::Transaction::gas_limit(tx.inner.inner()),
            ));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_makers_ahead_of_real_liquidity_cost_the_keeper_no_reverted_gas() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    // A: lot 100, no minimum: the one-lot dust.
    let a = w.create_market(10_000, 100, 0, expiry).await.unwrap();
    // B: tick 0.001, lot 1,000; minimum 40,000 = ceil(10,000,000 × 2,500 / 640,000) = 39,063
    // rounded up onto the 1,000 lot grid.
    let min_b = w.fillable_min_qty(1_000);
    assert_eq!(min_b, 40_000);
    let b = w.create_market(1_000, 1_000, min_b, expiry).await.unwrap();
    let ms = makers(&w).await;
    let distinct: std::collections::HashSet<Address> = ms.iter().map(|(a, _)| *a).collect();
    assert_eq!(distinct.len(), MAKERS);
    seed(&w, &ms, &[a, b], |i| vec![(a, 400_000, 100), (b, 300_000 + 1_000 * i as u64, min_b)])
        .await;
    // Real liquidity behind them, inside the limit: FIFO-behind the dust in A, a level above
    // B's 64 levels in B.
    w.ask(a, 400_000, 20_000_000).await.unwrap();
    w.ask(b, 364_000, 20_000_000).await.unwrap();

    let k = w.keeper(Some(dir.path().to_path_buf()));
    // 25 % over the price shown, so B's 64 levels (0.300-0.363) and its real liquidity at
    // 0.364 are all inside the limit: ceil(300,000 × 1.25) = 375,000. A's limit is then
    // 500,000, also above its book.
    let quote = keeper::domain::config::QuotePolicy { slippage_bps: 2_500, ..Default::default() };
    let mut k = k.quote(quote).resume().build().unwrap();
    let balance = |w: &World| {
        let (p, addr) = (w.keeper_rpc.clone(), w.keeper_addr);
        async move { p.get_balance(addr).await.unwrap() }
    };
    let before = balance(&w).await;
    let first = w.keeper_rpc.get_block_number().await.unwrap() + 1;
    let r = builtin_cycle(&mut k).await;
    let last = w.keeper_rpc.get_block_number().await.unwrap();
    let after = balance(&w).await;
    // A's grid is one the gate refuses by rule 20 (64 × 100 = 6,400 < 2,500,000), so only B is
    // asked about.
    assert_eq!((r.asked, r.submitted), (1, 1), "B asked and submitted, A never asked");

    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    let row = |m: Address| ds.iter().find(|d| d.market == m.to_checksum(None)).copied();
    assert!(row(a).is_none(), "A: an untradable grid is not asked about, so it has no row");
    let rb = row(b).expect("B published a row");
    assert_eq!(rb.reason, reason::PASS, "B: the match cap's fill reaches the minimum");
    // 64 matches of 40,000 units each: 2,560,000 filled, the real liquidity never reached.
    assert_eq!(rb.filled, "2560000");
    // Spent: 40,000 × (0.300 + 0.301 + ... + 0.363) = 40,000 × 64 × 0.3315 = 848,640.
    assert_eq!(rb.spent, "848640");
    // Best level 0.300; average ceil(848,640 × 1e6 / 2,560,000) = 331,500.
    assert_eq!(rb.price_paid, "300000");
    assert_eq!(rb.average_price_paid.as_deref(), Some("331500"));

    let receipts = keeper_receipts(&w, first, last).await;
    let reverted = receipts.iter().filter(|(_, _, ok, _)| !ok).count();
    let paid: U256 = receipts.iter().map(|(p, _, _, _)| *p).sum();
    assert_eq!(receipts.len(), 1, "one submission (B), nothing else signed");
    assert_eq!(reverted, 0, "no status-0 receipt");
    assert_eq!(before - after, paid, "the key spent exactly its receipts' gas");
    let gas: Vec<u64> = receipts.iter().map(|(_, g, _, _)| *g).collect();
    let worst = *gas.iter().max().unwrap();
    assert!(
        worst <= sender::SUBMIT_GAS_WORST_IOC,
        "the worst take ({worst} gas) fits the cap {}",
        sender::SUBMIT_GAS_WORST_IOC
    );
    // From the mined transactions: the journal retires a submission once it is final.
    let signed: Vec<u64> = receipts.iter().map(|(_, _, _, limit)| *limit).collect();
    println!(
        "gas: A (64 one-lot asks, a rule-20 grid) not asked; B (64 makers on 64 levels, PASS \
         filling 2,560,000) used {gas:?} gas, signed with limits {signed:?} (estimate + 25 % + 30,000, \
         cap {}); the key paid {} wei = the receipts' {} wei; {reverted} status-0 receipts",
        sender::SUBMIT_GAS_WORST_IOC,
        before - after,
        paid
    );

    // The gate is paused (its owner is the keeper key here): a third market's submission would
    // revert, so its estimate does, and nothing is signed.
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    g.pause().send().await.unwrap().get_receipt().await.unwrap();
    let c = common::buy_up_market(&w).await;
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let before = balance(&w).await;
    let r = builtin_cycle(&mut k).await;
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (1, 0, 1));
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), nonce);
    assert_eq!(balance(&w).await, before, "no gas spent on a call the estimate showed failing");
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    let o = off.iter().find(|o| o.market == c.to_checksum(None)).expect("an off-chain row");
    assert!(
        o.error.contains("not sent") && o.error.contains("GatePaused"),
        "the row names the decoded revert: {}",
        o.error
    );
    println!("gas: paused gate: off-chain row {:?}; nonce and balance unchanged", o.error);
    w.stop().await;
}
