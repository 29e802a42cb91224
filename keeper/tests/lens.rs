//! The batched book reader (`keeper::chain::lens`) against the per-market reader on a real anvil: the
//! same `MarketState` for every market (books of several depths, an empty book, a finalized
//! market), across chunk boundaries; a market the lens cannot read falls back to the
//! per-market reader and keeps its error; and the committed creation code is the compiled
//! source's.

mod common;

use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use common::{root, world};
use keeper::{
    chain::follower::Follower,
    chain::lens,
    chain::reads::{self, MarketInfo, MarketState},
};

/// What a read returned, comparable (`MarketState` has no `PartialEq`).
type Seen = (MarketInfo, U256, U256, bool, Vec<(U256, U256)>, Vec<(U256, U256)>);

fn seen(st: &MarketState) -> Seen {
    (st.info.clone(), st.best_bid, st.best_ask, st.finalized, st.bids.clone(), st.asks.clone())
}

/// Per-market reads, in flight at once (the keeper's default).
const CONCURRENCY: usize = 32;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lens_reads_what_the_per_market_reader_reads() {
    let w = world(&["--prune-history".to_string()]).await;
    let t = w.chain_time().await.unwrap();
    // Expiry in 1 hour for the market resolved below, a day for the others.
    let (soon, later) = (t + 3_600, t + 86_400);

    // Market 0: empty book. Market 1: finalized, with an ask still resting at 0.60.
    let empty = w.create_market(10_000, 100, 0, later).await.unwrap();
    let finalized = w.create_market(10_000, 100, 0, soon).await.unwrap();
    w.ask(finalized, 600_000, 1_000).await.unwrap();
    // Markets 2..=6: market 2 + k holds k + 1 bid levels at 0.40, 0.39, ... (k + 1 of them)
    // and k + 1 ask levels at 0.50, 0.51, ..., 300 units each: depths 1 to 5, so books deeper
    // than BOOK_DEPTH = 3 come back cut to 3 levels by both readers.
    let mut markets = vec![empty, finalized];
    for k in 0..5u64 {
        let m = w.create_market(10_000, 100, 0, later).await.unwrap();
        for level in 0..=k {
            w.bid(m, 400_000 - level * 10_000, 300).await.unwrap();
            w.ask(m, 500_000 + level * 10_000, 300).await.unwrap();
        }
        markets.push(m);
    }
    w.mine_at(soon).await.unwrap();
    w.resolve(finalized, true).await.unwrap();

    // Discovered as the keeper discovers them: the factory's logs from block 0.
    let mut follower = Follower::new(w.deployment.gate, w.deployment.factory, 0, 0);
    follower.step(&w.keeper_rpc).await.unwrap();
    let infos: Vec<_> = follower.markets().cloned().collect();
    assert_eq!(infos.iter().map(|m| m.address).collect::<Vec<_>>(), markets);

    let at = w.keeper_rpc.get_block_number().await.unwrap();
    let one_by_one = reads::read_markets(&w.keeper_rpc, &infos, at, CONCURRENCY).await;
    let one_by_one: Vec<Seen> = one_by_one.iter().map(|(_, r)| seen(r.as_ref().unwrap())).collect();
    // The per-market reader's own view of the fixtures, so the comparison below is not vacuous:
    // empty book; finalized; depth 1 (bid 0.40 / ask 0.50); depth 5 cut to 3.
    assert_eq!((one_by_one[0].1, one_by_one[0].2), (U256::ZERO, U256::ZERO));
    assert!(one_by_one[0].4.is_empty() && one_by_one[0].5.is_empty());
    assert!(one_by_one[1].3, "market 1 is final");
    assert_eq!(one_by_one[2].4, vec![(U256::from(400_000), U256::from(300))]);
    assert_eq!(one_by_one[2].5, vec![(U256::from(500_000), U256::from(300))]);
    let asks_of_deepest: Vec<u64> = one_by_one[6].5.iter().map(|l| l.0.to::<u64>()).collect();
    assert_eq!(asks_of_deepest, vec![500_000, 510_000, 520_000]);

    // One call for all seven, then chunks of 3 (3 + 3 + 1: a boundary inside the list and a
    // last chunk of one), then the default chunk size.
    for per_call in [infos.len(), 3, lens::MARKETS_PER_CALL] {
        let batched =
            lens::read_markets_chunked(&w.keeper_rpc, &infos, at, CONCURRENCY, per_call).await;
        assert_eq!(batched.len(), infos.len());
        for (i, (info, r)) in batched.iter().enumerate() {
            assert_eq!(info, &infos[i], "order kept ({per_call} per call)");
            let st = r.as_ref().unwrap_or_else(|e| panic!("market {i}: {e}"));
            assert_eq!(seen(st), one_by_one[i], "market {i}, {per_call} per call");
        }
    }
    // The lens itself answered (no fallback hid a failing lens): every book flagged readable.
    let books = lens::read_chunk(&w.keeper_rpc, &infos, at).await.unwrap();
    assert!(books.iter().all(|b| b.ok));

    // A market the lens cannot read: an address without code (a hand-made MarketInfo; the
    // factory never announces one). The lens flags it, the per-market reader fails on it, and
    // the batch keeps that error while the others still come back.
    let mut bogus = infos[2].clone();
    bogus.address = Address::repeat_byte(0x42);
    let with_bogus = vec![infos[0].clone(), bogus.clone(), infos[6].clone()];
    let books = lens::read_chunk(&w.keeper_rpc, &with_bogus, at).await.unwrap();
    assert_eq!(books.iter().map(|b| b.ok).collect::<Vec<_>>(), vec![true, false, true]);
    let batched = lens::read_markets(&w.keeper_rpc, &with_bogus, at, CONCURRENCY).await;
    assert_eq!(seen(batched[0].1.as_ref().unwrap()), one_by_one[0]);
    match &batched[1].1 {
        Err(reads::CollectError::Market { market, .. }) => assert_eq!(*market, bogus.address),
        other => panic!("want the per-market reader's error, got {other:?}"),
    }
    assert_eq!(seen(batched[2].1.as_ref().unwrap()), one_by_one[6]);
    w.stop().await;
}

/// The creation code the keeper sends is what the pinned forge compiles from
/// contracts/src/periphery/BookLens.sol with the settings of foundry.toml.
#[test]
fn committed_initcode_is_the_compiled_source() {
    let root = root();
    let out = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(root.join(".toolchain/bin/forge"))
        .current_dir(&root)
        .env("FOUNDRY_OUT", out.path().join("out"))
        .env("FOUNDRY_CACHE_PATH", out.path().join("cache"))
        .args(["inspect", "contracts/src/periphery/BookLens.sol:BookLens", "bytecode"])
        .output()
        .expect("the pinned forge runs (make bootstrap)");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let compiled = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        lens::INITCODE_HEX.trim(),
        compiled.trim(),
        "keeper/src/chain/book_lens.hex is stale: regenerate it with `forge inspect \
         contracts/src/periphery/BookLens.sol:BookLens bytecode > keeper/src/chain/book_lens.hex`"
    );
}

/// A market created before the follower's first scanned block is found through `marketAt`; its
/// question then comes from its own `MarketCreated` log (found by its indexed address) and is
/// checked against its `questionHash()`, exactly as for a market whose log was scanned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_market_found_through_market_at_keeps_its_checked_question() {
    use keeper::{chain::reads::Question, dev::world::Actor};
    let w = world(&[]).await;
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let q = "Will a question with \"quotes\" and\na newline survive?";
    let older = w
        .create_market_asking(Actor::Maker, q, 10_000, 100, 0, expiry, w.maker_addr)
        .await
        .unwrap();
    w.mine_at(w.chain_time().await.unwrap() + 10).await.unwrap();
    let from = w.keeper_rpc.get_block_number().await.unwrap() + 1;
    let newer = w.create_market(10_000, 100, 0, expiry).await.unwrap();
    // Scanning from after the first market's block: its log is never scanned.
    let mut follower = Follower::new(w.deployment.gate, w.deployment.factory, from, 0);
    follower.step(&w.keeper_rpc).await.unwrap();
    let got: Vec<(Address, Question)> =
        follower.markets().map(|m| (m.address, m.question.clone())).collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], (older, Question::Checked(q.to_string())));
    assert_eq!(got[1].0, newer);
    assert!(matches!(&got[1].1, Question::Checked(t) if t.starts_with("Will ")), "{got:?}");
    w.stop().await;
}
