//! The kit's anvil on the pinned binary: what each history setting allows (the table in
//! `riskgate_kit::anvil`'s docs), and that a stopped or dropped anvil leaves no per-block state
//! behind, neither in its own folder nor under `~/.foundry/anvil/tmp`.

use alloy::providers::{Provider, ProviderBuilder};
use riskgate_kit::anvil::{self, Anvil, History};
use std::path::Path;

/// Enough empty blocks that anvil's in-memory window overflows and, with full history, the
/// older states spill to disk (anvil 1.7.1 keeps a bounded number of states in memory; 500
/// blocks after a few transfers were seen to spill).
const BLOCKS_TO_SPILL: u64 = 500;
/// The reorg depth the history tests ask for, and the window that allows it.
/// Transfers before the empty blocks (each is mined in a block of its own).
const TRANSFERS: usize = 4;
const REORG_DEPTH: u64 = 2;
const RECENT_STATES: u32 = 16;

fn bin() -> std::path::PathBuf {
    anvil::default_bin(&riskgate_kit::workspace_root())
}

/// Files and folders under `dir`, recursively (0 when it does not exist).
fn entries(dir: &Path) -> usize {
    let Ok(read) = std::fs::read_dir(dir) else { return 0 };
    read.flatten().map(|e| 1 + if e.path().is_dir() { entries(&e.path()) } else { 0 }).sum()
}

async fn rpc(
    a: &Anvil,
    method: &'static str,
    params: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let provider = ProviderBuilder::new().connect_http(a.url.clone());
    provider
        .raw_request::<_, serde_json::Value>(method.into(), params)
        .await
        .map_err(|e| e.to_string())
}

/// A few value transfers (anvil's unlocked dev account to itself), then `BLOCKS_TO_SPILL`
/// empty blocks: blocks with state changes, then enough blocks to push them out of memory.
async fn fill(a: &Anvil) {
    let accounts = rpc(a, "eth_accounts", serde_json::json!([])).await.unwrap();
    let from = accounts[0].clone();
    for _ in 0..TRANSFERS {
        let tx = serde_json::json!([{"from": from, "to": from, "value": "0x1"}]);
        rpc(a, "eth_sendTransaction", tx).await.unwrap();
    }
    rpc(a, "anvil_mine", serde_json::json!([BLOCKS_TO_SPILL])).await.unwrap();
}

async fn block_number(a: &Anvil) -> u64 {
    ProviderBuilder::new()
        .connect_http(a.url.clone())
        .get_block_number()
        .await
        .expect("block number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_or_dropped_anvil_leaves_no_state_behind() {
    // anvil runs with a HOME of its own, so what it would write under ~/.foundry is seen here
    // and nothing another engineer's anvil writes can confuse the count.
    let home = tempfile::tempdir().unwrap();
    let foundry_tmp = home.path().join(".foundry").join("anvil").join("tmp");

    let a = Anvil::builder(&bin())
        .history(History::Full)
        .env("HOME", home.path())
        .start()
        .await
        .unwrap();
    let state_dir = a.state_dir().unwrap();
    fill(&a).await;
    assert!(entries(&state_dir) > 0, "full history spills states into the instance's folder");
    assert_eq!(entries(&foundry_tmp), 0, "nothing under ~/.foundry/anvil/tmp");
    a.stop().await;
    assert!(!state_dir.exists(), "stop removes the state folder");
    assert_eq!(entries(&foundry_tmp), 0);

    // Dropped without stop (as on a panic): killed, reaped, folder removed.
    let a = Anvil::builder(&bin())
        .history(History::Full)
        .env("HOME", home.path())
        .start()
        .await
        .unwrap();
    let state_dir = a.state_dir().unwrap();
    let url = a.url.clone();
    fill(&a).await;
    assert!(entries(&state_dir) > 0);
    drop(a);
    assert!(!state_dir.exists(), "drop removes the state folder");
    assert_eq!(entries(&foundry_tmp), 0);
    let gone = ProviderBuilder::new().connect_http(url).get_block_number().await;
    assert!(gone.is_err(), "a dropped anvil no longer answers");

    // The default (pruned) and a recent window write nothing anywhere.
    for history in [History::Pruned, History::Recent(RECENT_STATES)] {
        let a =
            Anvil::builder(&bin()).history(history).env("HOME", home.path()).start().await.unwrap();
        let state_dir = a.state_dir().unwrap();
        fill(&a).await;
        assert_eq!(entries(&state_dir), 0, "{history:?} keeps nothing on disk");
        a.stop().await;
        assert!(!state_dir.exists());
    }
    assert_eq!(entries(&foundry_tmp), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruned_history_allows_snapshots_but_not_reorgs_and_a_window_allows_both() {
    let a = Anvil::start(&bin(), None, &[]).await.unwrap();
    assert_eq!(a.history(), History::Pruned);
    rpc(&a, "anvil_mine", serde_json::json!([3])).await.unwrap();
    let snap = rpc(&a, "evm_snapshot", serde_json::json!([])).await.unwrap();
    rpc(&a, "anvil_mine", serde_json::json!([2])).await.unwrap();
    assert_eq!(block_number(&a).await, 5); // 3 + 2
    assert_eq!(
        rpc(&a, "evm_revert", serde_json::json!([snap])).await.unwrap(),
        serde_json::json!(true)
    );
    assert_eq!(block_number(&a).await, 3); // back at the snapshot
    let reorg = rpc(&a, "anvil_reorg", serde_json::json!([REORG_DEPTH, []])).await;
    assert!(reorg.is_err(), "a pruned anvil cannot reorg: {reorg:?}");
    // State at a past block is gone too.
    let past = rpc(
        &a,
        "eth_getBalance",
        serde_json::json!(["0x0000000000000000000000000000000000000001", "0x1"]),
    )
    .await;
    assert!(past.is_err(), "{past:?}");
    a.stop().await;

    let a = Anvil::builder(&bin()).history(History::Recent(RECENT_STATES)).start().await.unwrap();
    rpc(&a, "anvil_mine", serde_json::json!([3])).await.unwrap();
    rpc(&a, "anvil_reorg", serde_json::json!([REORG_DEPTH, []])).await.unwrap();
    // A reorg replaces the last REORG_DEPTH blocks with as many new ones: still at 3.
    assert_eq!(block_number(&a).await, 3);
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_or_contradicting_argument_is_refused_before_spawning() {
    let err = Anvil::start(&bin(), None, &["--host".into(), "0.0.0.0".into()]).await.unwrap_err();
    assert!(err.to_string().contains("--host"), "{err}");
    // An argument anvil itself rejects: the error quotes anvil's own message.
    let err = Anvil::start(&bin(), None, &["--no-such-flag".into()]).await.unwrap_err();
    assert!(err.to_string().contains("no-such-flag"), "{err}");
}
