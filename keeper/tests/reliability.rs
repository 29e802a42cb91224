//! Reliability tests against a real anvil (from the pinned toolchain), the real contracts
//! compiled from contracts/src, and a real HTTP inference server on loopback. No mocks.
//!
//! The tests share one compiled artifact set and run one at a time (a global lock), so the
//! suite stays light on a 2-core machine. Shared helpers live in `common/`. Chain time is a
//! count of blocks (`common::world` pins each block to 1 s after the last), so the wall clock
//! never decides what is due, expired or late; waits on the keeper binary are hang guards.
// Each test runs on its own runtime; the std lock held across awaits is exactly what serialises
// them (no task inside one runtime ever contends for it).
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::primitives::Address;
use common::{
    anvil_bin, decisions, eventually, offchain, pin_block_time, root, serial, world, Drained,
    HANG_GUARD,
};
use keeper::{
    commands::cli::InferenceOptions,
    dev::world::Actor,
    inference::{openai::OpenAiClient, Model},
    kit::anvil::Anvil,
    kit::bindings::IRiskGate,
};
use std::{process::Command, time::Duration};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_never_resubmits_inside_the_reask_interval() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    // Three books; the builtin model answers BUY_UP (ask 0.40), BUY_DOWN (bid 0.60), ABSTAIN.
    let a = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(a, 400_000, 20_000_000).await.unwrap();
    let b = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.bid(b, 600_000, 20_000_000).await.unwrap();
    let c = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(c, 520_000, 1_000_000).await.unwrap();
    let cancel = CancellationToken::new();

    let mut first = w.keeper(Some(dir.path().to_path_buf())).reask_secs(3_600).build().unwrap();
    first.set_model(Model::Builtin);
    let r = first.cycle(None, &cancel).await.unwrap();
    assert_eq!(r.submitted, 3, "one decision per market on the first cycle");
    drop(first); // the "crash": all in-memory state is gone

    // A new process: state comes from chain, the feed file only supplies annotations.
    let second = w.keeper(Some(dir.path().to_path_buf())).reask_secs(3_600);
    let mut second = second.resume().build().unwrap();
    second.set_model(Model::Builtin);
    let r = second.cycle(None, &cancel).await.unwrap();
    assert_eq!(r.submitted, 0, "inside the 3,600 s interval nothing is asked again");
    let rows = common::record_rows(dir.path());
    assert_eq!(decisions(&rows).len(), 3, "no row lost, none duplicated");
    assert!(decisions(&rows).iter().all(|d| d.note.provider.as_deref() == Some("builtin")));

    // 3,599 s after the earliest decision nothing is due yet; 3,600 s after the latest all
    // three are. The chain time is pinned block by block (evm_setNextBlockTimestamp, and 1 s
    // per block otherwise), so wall-clock time spent between the calls cannot leak into
    // anvil's clock.
    let times: Vec<u64> = decisions(&rows).iter().map(|d| d.time).collect();
    let (first_time, last_time) = (*times.iter().min().unwrap(), *times.iter().max().unwrap());
    w.mine_at(first_time + 3_599).await.unwrap();
    let third = w.keeper(Some(dir.path().to_path_buf())).reask_secs(3_600);
    let mut third = third.resume().build().unwrap();
    third.set_model(Model::Builtin);
    assert_eq!(third.cycle(None, &cancel).await.unwrap().submitted, 0);
    w.mine_at(last_time + 3_600).await.unwrap();
    third.set_model(Model::Builtin);
    assert_eq!(third.cycle(None, &cancel).await.unwrap().submitted, 3);
    let rows = common::record_rows(dir.path());
    assert_eq!(decisions(&rows).len(), 6);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_markets_are_skipped_and_stuck_positions_are_written_off_then_redeemed() {
    let _g = serial();
    let w = world(&[]).await; // trusts the maker only
    let dir = tempfile::tempdir().unwrap();
    let now = w.chain_time().await.unwrap();
    // An outsider's market with itself as resolver: the builtin model would buy it (0.40).
    let outsider = w.addr(Actor::Outsider);
    let untrusted =
        w.create_market_as(Actor::Outsider, 10_000, 100, 0, now + 86_400, outsider).await.unwrap();
    w.ask_as(Actor::Outsider, untrusted, 400_000, 20_000_000).await.unwrap();
    // Spam (issue 14): an outsider's market naming the TRUSTED maker as resolver, on a grid the
    // gate can fill. Its creator is not trusted (rule 19), so it is never asked about either.
    let q = w.fillable_min_qty(100);
    let spam = w
        .create_market_as(Actor::Outsider, 10_000, 100, q, now + 86_400, w.maker_addr)
        .await
        .unwrap();
    w.ask_as(Actor::Outsider, spam, 400_000, 20_000_000).await.unwrap();
    // The maker's market, expiring in 15 minutes, that nobody will resolve in time.
    let stuck = w.create_market(10_000, 100, w.fillable_min_qty(100), now + 900).await.unwrap();
    w.ask(stuck, 400_000, 20_000_000).await.unwrap();
    let cancel = CancellationToken::new();
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    assert_eq!(
        (r.asked, r.submitted),
        (1, 1),
        "only the market of a trusted resolver AND a trusted creator is asked"
    );
    let spam_info =
        k.collector().markets().into_iter().find(|m| m.address == spam).expect("spam is known");
    assert_eq!(spam_info.creator, outsider, "MarketCreated names the spam's creator");
    assert!(
        k.collector().resolver_trusted(&spam_info) && !k.collector().creator_trusted(&spam_info)
    );
    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    assert_eq!(ds[0].market, stuck.to_checksum(None));
    // ask 0.40 on a 0.01 grid, default 50 bps: maxPricePaid ceil(400000 * 1.005) = 402000;
    // limit 402000 rounded down onto the grid = 400000; cost 10e6 * 0.40 = 4e6.
    assert_eq!(ds[0].reason, 0);
    let q = ds[0].quote.as_ref().expect("a BUY row carries the quote it was evaluated with");
    assert_eq!(q.max_price_paid, "402000");
    // deadline = chain time of the read + 60, and the read precedes execution.
    let executed = ds[0].book.as_ref().unwrap().now;
    assert!(executed <= q.deadline && q.deadline <= executed + 60, "{executed} vs {}", q.deadline);
    assert_eq!((ds[0].limit.as_str(), ds[0].cost.as_str()), ("400000", "4000000"));

    // Expiry + writeOffGrace (3,600) passes unresolved: the next cycle writes it off.
    w.mine_at(now + 900 + 3_600 + 1).await.unwrap();
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    assert_eq!((r.written_off, r.asked), (1, 0));
    let gate = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    assert_eq!(gate.openPositions().call().await.unwrap(), 0, "the slot is free again");
    let rows = common::record_rows(dir.path());
    let d = decisions(&rows)[0];
    assert_eq!(d.write_off.as_ref().map(|x| x.notional.as_str()), Some("4000000"));
    assert!(d.settlement.is_none());

    // The market resolves late, UP: the keeper still redeems the written-off claim.
    w.resolve(stuck, true).await.unwrap();
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    assert_eq!(r.redeemed, 1);
    let rows = common::record_rows(dir.path());
    let st = decisions(&rows)[0].settlement.clone().expect("settled after the write-off");
    assert_eq!((st.payout.as_str(), st.pnl.as_str()), ("10000000", "6000000"));
    // In the feed: the decision, then a write-off row and a late payout row, each naming it.
    let named = decisions(&rows)[0].reference();
    let kinds: Vec<&str> = rows
        .iter()
        .filter(|r| r.closes().contains(&named))
        .map(|r| match r {
            keeper::record::FeedRow::WriteOff(_) => "write_off",
            keeper::record::FeedRow::LatePayout(_) => "late_payout",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["write_off", "late_payout"]);
    w.stop().await;
}

/// A tiny OpenAI-compatible server: answers the n-th request with `script[n]`.
#[derive(Clone, Copy)]
enum Reply {
    Status500,
    Garbage,
    Hang,
    Content(&'static str),
}

async fn inference_server(script: Vec<Reply>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut n = 0usize;
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let reply = script.get(n).copied().unwrap_or(Reply::Status500);
            n += 1;
            tokio::spawn(async move {
                // Read headers and the body (Content-Length) before answering.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(k) = sock.read(&mut chunk).await else { return };
                    if k == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..k]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let l = l.to_ascii_lowercase();
                                l.strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0usize);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let (status, body) = match reply {
                    Reply::Status500 => ("500 Internal Server Error", "{\"error\":\"boom\"}".to_string()),
                    Reply::Garbage => ("200 OK", "<<<this is not json>>>".to_string()),
                    Reply::Hang => {
                        // Never answered: held until the client gives up and closes the
                        // connection, however long that takes.
                        let _ = sock.read(&mut chunk).await;
                        return;
                    }
                    Reply::Content(c) => (
                        "200 OK",
                        serde_json::json!({"choices":[{"message":{"role":"assistant","content":c}}]})
                            .to_string(),
                    ),
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inference_failures_are_recorded_and_nothing_is_fabricated() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    for _ in 0..5 {
        let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
        w.ask(m, 400_000, 20_000_000).await.unwrap();
    }
    // Markets are asked in discovery order, one at a time (concurrency 1). The hung request
    // is never answered, so only the client's timeout ends it; the others are answered at
    // once on loopback, far inside the same timeout however loaded the machine is.
    let url = inference_server(vec![
        Reply::Status500,
        Reply::Garbage,
        Reply::Hang,
        Reply::Content("totally not a verdict"),
        Reply::Content("\"BUY_UP\""),
    ])
    .await;
    let provider = Model::OpenAi(
        OpenAiClient::new(&url, "test-model", Duration::from_secs(10), InferenceOptions::default())
            .unwrap(),
    );
    let mut k = w.keeper(Some(dir.path().to_path_buf())).concurrency(1).build().unwrap();
    k.set_model(provider);
    let r = k.cycle(None, &CancellationToken::new()).await.unwrap();
    assert_eq!(r.asked, 5);
    assert_eq!(r.submitted, 2, "only the two real answers reach the chain");
    assert_eq!(r.offchain_failures, 3);
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    assert_eq!(off.len(), 3);
    assert!(off[0].error.contains("HTTP 500"), "{}", off[0].error);
    assert!(off[1].error.contains("not JSON"), "{}", off[1].error);
    assert!(off[2].error.contains("timed out"), "{}", off[2].error);
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 2);
    // The garbage text is submitted verbatim and the gate publishes it as reason 11, verdict 255.
    assert_eq!(ds[0].raw.as_deref(), Some("totally not a verdict"));
    assert_eq!((ds[0].reason, ds[0].verdict), (11, 255));
    // A quoted answer is submitted with its quotes; the gate trims them and passes it:
    // ask 0.40 on a 0.01 grid -> price 400000, quantity 10e6 (lot 100), cost 4e6.
    assert_eq!(ds[1].raw.as_deref(), Some("\"BUY_UP\""));
    assert_eq!(
        (ds[1].reason, ds[1].price_paid.as_str(), ds[1].cost.as_str()),
        (0, "400000", "4000000")
    );
    // The stub names no model in its responses: the row says so, never only the flag's name.
    let named = Some("test-model (the server named no model)");
    assert!(ds.iter().all(|d| d.note.model.as_deref() == named), "{:?}", ds[0].note);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anvil_restart_mid_run_is_reported_and_the_keeper_resumes() {
    let _g = serial();
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let dump = vec!["--dump-state".to_string(), state_file.display().to_string()];
    let mut w = world(&dump).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m1 = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m1, 400_000, 20_000_000).await.unwrap();

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .args(["run", "--interval-secs", "1", "--reask-secs", "3600", "--rpc-url"])
        .arg(w.anvil.url.as_str())
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .arg("--results")
        .arg(dir.path())
        .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = Drained::new(&mut child);
    let rows_at_least = |n: usize| {
        // The state database may not exist yet, or be mid-write: a read that fails is "not yet".
        let rows = keeper::record::store::Store::open_read(dir.path())
            .ok()
            .flatten()
            .and_then(|s| s.rows().ok())
            .unwrap_or_default();
        decisions(&rows).len() >= n
    };
    assert!(eventually(HANG_GUARD, || rows_at_least(1)).await, "first decision recorded");

    // The node goes away (SIGTERM: state dumped) and stays away until the keeper has reported
    // a failed cycle, however long that takes it; then it comes back on the same port with its
    // state. `World` owns its node, so a stand-in anvil holds that place meanwhile (the keeper
    // never hears of it).
    let port = w.anvil.port;
    let stand_in = Anvil::start(&anvil_bin(), None, &[]).await.unwrap();
    let down_from = log.len();
    std::mem::replace(&mut w.anvil, stand_in).stop().await;
    assert!(
        eventually(HANG_GUARD, || log.logged_since(down_from, "cycle failed")).await,
        "the outage is reported while the node is down"
    );
    let reload = vec!["--load-state".to_string(), state_file.display().to_string()];
    let back = Anvil::builder(&anvil_bin()).port(port).args(&reload).start().await.unwrap();
    std::mem::replace(&mut w.anvil, back).stop().await;
    pin_block_time(&w.keeper_rpc).await;
    // A market created after the outage is found and decided in a later cycle.
    let m2 = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m2, 400_000, 20_000_000).await.unwrap();
    assert!(
        eventually(HANG_GUARD, || rows_at_least(2)).await,
        "the keeper resumed after the node came back"
    );

    // SIGTERM stops it cleanly.
    let pid = child.id().unwrap() as libc::pid_t;
    // SAFETY: kill(2) on the pid of the child this test spawned.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    // A hang guard: the keeper stops at its next await point, well within it on any machine.
    let status =
        tokio::time::timeout(HANG_GUARD, child.wait()).await.expect("stops after SIGTERM").unwrap();
    let err = log.finish().await;
    assert!(status.success(), "clean exit on SIGTERM: {err}");
    assert!(err.contains("cycle failed"), "the outage is reported: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let rows = common::record_rows(dir.path());
    let ds = decisions(&rows);
    let mut markets: Vec<&str> = ds.iter().map(|d| d.market.as_str()).collect();
    markets.sort_unstable();
    markets.dedup();
    assert_eq!(markets.len(), 2, "each market decided once inside the interval");
    assert_eq!(ds.len(), 2);
    assert!(ds.iter().any(|d| d.market == m2.to_checksum(None)));
    w.stop().await;
}

fn keeper_cmd(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .args(args)
        .env_remove("KEEPER_RPC_URL")
        .env_remove("KEEPER_GATE")
        .env_remove("KEEPER_PRIVATE_KEY")
        .env_remove("KEEPER_KEYSTORE")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

fn assert_one_line_error(code: i32, err: &str, hint: &str) {
    assert_ne!(code, 0, "non-zero exit: {err}");
    assert!(!err.contains("panicked"), "never a panic: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(hint), "says how to fix it ({hint}): {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configuration_is_one_line_with_a_fix_and_a_nonzero_exit() {
    let _g = serial();
    let w = world(&[]).await;
    let url = w.anvil.url.to_string();
    let gate = w.deployment.gate.to_string();
    let not_gate = w.deployment.collateral.to_string(); // has code, but is an ERC20
    let no_code = Address::repeat_byte(0x42).to_string();
    let dead = format!("http://127.0.0.1:{}", keeper::kit::anvil::free_port().unwrap());

    let (c, e) = keeper_cmd(&["run", "--once", "--gate", &gate]);
    assert_one_line_error(c, &e, "KEEPER_RPC_URL");
    let (c, e) = keeper_cmd(&["run", "--once", "--rpc-url", &url]);
    assert_one_line_error(c, &e, "KEEPER_GATE");
    let (c, e) = keeper_cmd(&["run", "--once", "--rpc-url", &dead, "--gate", &gate]);
    assert_one_line_error(c, &e, "is the node running");
    let (c, e) =
        keeper_cmd(&["run", "--once", "--rpc-url", &url, "--chain-id", "1", "--gate", &gate]);
    assert_one_line_error(c, &e, "wrong --rpc-url or --chain-id");
    let (c, e) = keeper_cmd(&["run", "--once", "--rpc-url", &url, "--gate", &no_code]);
    assert_one_line_error(c, &e, "has no code");
    let (c, e) = keeper_cmd(&["run", "--once", "--rpc-url", &url, "--gate", &not_gate]);
    assert_one_line_error(c, &e, "wrong --gate");
    let (c, e) = keeper_cmd(&["run", "--once", "--rpc-url", &url, "--gate", &gate]);
    assert_one_line_error(c, &e, "KEEPER_PRIVATE_KEY");
    let (c, e) =
        keeper_cmd(&["run", "--once", "--rpc-url", &url, "--gate", &gate, "--model", "openai"]);
    assert_one_line_error(c, &e, "KEEPER_OPENAI_URL");
    w.stop().await;
}

/// A question that is not UTF-8 (the factory takes any 1 to 280 bytes) cannot be stated in a
/// prompt: the keeper does not ask about that market, records one off-chain row saying why
/// (not one per cycle), and asks about the others as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_market_whose_question_is_not_text_is_never_asked_and_said_once() {
    use alloy::{
        network::TransactionBuilder, primitives::Bytes, providers::Provider,
        rpc::types::TransactionRequest, sol_types::SolCall,
    };
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let q = w.fillable_min_qty(100);
    // `string` and `bytes` encode alike, so the factory's own selector with bytes arguments
    // sends a question of invalid UTF-8 (0xff never starts a character).
    let args = (
        Bytes::from(vec![b'W', 0xff, 0xfe, b'?']),
        alloy::primitives::U256::from(10_000u64),
        alloy::primitives::U256::from(100u64),
        alloy::primitives::U256::from(q),
        expiry,
        w.maker_addr,
    );
    let mut data = keeper::kit::bindings::IMarketFactory::createMarketCall::SELECTOR.to_vec();
    data.extend(alloy::sol_types::SolValue::abi_encode_params(&args));
    let tx =
        TransactionRequest::default().with_to(w.deployment.factory).with_input(Bytes::from(data));
    let p = w.signer(Actor::Maker);
    let r = p.send_transaction(tx).await.unwrap().get_receipt().await.unwrap();
    assert!(r.status(), "the factory takes any bytes as a question");
    let fine = w.create_market(10_000, 100, q, expiry).await.unwrap();
    w.ask(fine, 400_000, 20_000_000).await.unwrap();

    let cancel = CancellationToken::new();
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    k.set_model(Model::Builtin);
    let r = k.cycle(None, &cancel).await.unwrap();
    // The readable market is asked and decided; the other is one off-chain row.
    assert_eq!((r.asked, r.submitted), (1, 1), "{r:?}");
    let rows = common::record_rows(dir.path());
    let off = offchain(&rows);
    assert_eq!(off.len(), 1, "{off:?}");
    assert!(off[0].error.contains("question is unreadable"), "{}", off[0].error);
    assert_eq!(decisions(&rows)[0].market, fine.to_checksum(None));
    // A later cycle (past the re-ask interval) writes no second row about it.
    w.mine_at(w.chain_time().await.unwrap() + 7_200).await.unwrap();
    k.set_model(Model::Builtin);
    k.cycle(None, &cancel).await.unwrap();
    let rows = common::record_rows(dir.path());
    assert_eq!(offchain(&rows).len(), 1);
    w.stop().await;
}

/// A results folder holding only another gate's journal, with a submission of that gate's still
/// pending, is refused when this gate's keeper starts in it: it names both owners and adopts
/// nothing (before, it took the other gate's pending submissions as its own and wrote them as
/// its rows). Adversary: an operator pointing `--results` at the wrong folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_of_another_gate_is_refused_not_adopted() {
    use keeper::chain::journal::{Attempt, Entry, Journal, QuoteSent, Submission};
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let other = Address::repeat_byte(0x42);
    {
        let mut j = Journal::open_for(dir.path(), w.deployment.chain_id, other).unwrap();
        let first = Attempt {
            tx: alloy::primitives::TxHash::repeat_byte(7),
            max_fee_per_gas: 2_000_000_000,
            max_priority_fee_per_gas: 1,
        };
        j.append(Entry::Submit(Submission {
            id: 0,
            market: Address::repeat_byte(1),
            nonce: 0,
            prompt_hash: alloy::primitives::B256::ZERO,
            raw: "BUY_UP".into(),
            quote: QuoteSent { max_price_paid: alloy::primitives::U256::from(1u64), deadline: 1 },
            gas: 21_000,
            first,
            read_block: 0,
            read_time: 0,
            note: Default::default(),
            attested: None,
        }))
        .unwrap();
    }
    let before = std::fs::read(dir.path().join(keeper::chain::journal::JOURNAL_FILE)).unwrap();
    let e = match w.keeper(Some(dir.path().to_path_buf())).resume().build() {
        Ok(_) => panic!("another gate's journal was adopted"),
        Err(e) => keeper::error_chain(&e),
    };
    assert!(e.contains(&other.to_checksum(None)), "names the journal's gate: {e}");
    assert!(e.contains(&w.deployment.gate.to_checksum(None)), "and this one: {e}");
    let after = std::fs::read(dir.path().join(keeper::chain::journal::JOURNAL_FILE)).unwrap();
    assert_eq!(before, after, "the other gate's journal is left as it was");
    println!("reliability: a journal of gate {other} refused by gate {}", w.deployment.gate);
    w.stop().await;
}

/// The state database names its chain and gate: a results folder holding another gate's
/// `state.sqlite` is refused when this gate's keeper starts in it, naming both, and the file is
/// left as it was (never cleared and rebuilt as this gate's). Adversary: an operator pointing
/// `--results` at the wrong folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_database_of_another_gate_is_refused_not_rebuilt() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let other = Address::repeat_byte(0x42);
    drop(keeper::record::store::Store::open(dir.path(), w.deployment.chain_id, other).unwrap());
    let state = dir.path().join(keeper::record::store::STATE_FILE);
    let owner = || -> String {
        let c = rusqlite::Connection::open(&state).unwrap();
        c.query_row("SELECT value FROM meta WHERE key = 'owner'", [], |r| r.get(0)).unwrap()
    };
    let before = owner();
    assert!(before.contains(&other.to_checksum(None)), "{before}");
    let e = match w.keeper(Some(dir.path().to_path_buf())).resume().build() {
        Ok(_) => panic!("another gate's state database was taken"),
        Err(e) => keeper::error_chain(&e),
    };
    assert!(e.contains(&other.to_checksum(None)), "names the database's gate: {e}");
    assert!(e.contains(&w.deployment.gate.to_checksum(None)), "and this one: {e}");
    assert!(e.contains("--results"), "says how to fix it: {e}");
    assert_eq!(
        owner(),
        before,
        "the other gate's state is still its own, not cleared for this one"
    );
    // Another chain's database for the same gate address is refused the same way.
    let dir2 = tempfile::tempdir().unwrap();
    drop(keeper::record::store::Store::open(dir2.path(), 1, w.deployment.gate).unwrap());
    assert!(w.keeper(Some(dir2.path().to_path_buf())).resume().build().is_err());
    println!("reliability: a state database of gate {other} refused by gate {}", w.deployment.gate);
    w.stop().await;
}

/// From the trial: on a chain with confirmations, `report --check` read to the head while the
/// feed held decisions 2 blocks deep ("on chain but missing from feed.jsonl"), and a plain
/// `report` in that window wrote those rows with an empty provider and model. `report` now
/// reads to the same depth as `run` (`--confirmations`), and the rows it adds carry the labels
/// the journal holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_reads_to_the_depth_run_writes_and_keeps_the_journals_labels() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    // Three markets the builtin model answers ABSTAIN on (only an ask at 0.52): rows that are
    // final once confirmed.
    common::abstain_markets(&w, 3).await;
    // Journalled (resume), as `keeper run` always is; one transaction per answer, so the three
    // decisions land in three blocks.
    let b = w.keeper(Some(dir.path().to_path_buf())).confirmations(2).resume().batch_max(1);
    let mut k = b.build().unwrap();
    assert_eq!(common::builtin_cycle(&mut k).await.submitted, 3);
    drop(k);
    // The three decisions are mined one block each; at 2 confirmations the newest two are
    // not in the record yet (head - 2 is the first one's block).
    let feed_path = dir.path().join("feed.jsonl");
    let feed_before = std::fs::read(&feed_path).unwrap();
    let in_feed = decisions(&keeper::record::feed::read_feed(&feed_path).unwrap()).len();
    assert_eq!(in_feed, 1, "one decision buried 2 deep, two not yet");
    let (url, gate) = (w.anvil.url.to_string(), w.deployment.gate.to_string());
    let results = dir.path().to_str().unwrap();
    let report = |extra: &[&str]| {
        let mut args = vec!["report", "--rpc-url", &url, "--gate", &gate, "--results", results];
        args.extend_from_slice(extra);
        keeper_cmd(&args)
    };
    let (c, e) = report(&["--check", "--confirmations", "2"]);
    assert_eq!(c, 0, "report --check at run's depth passes: {e}");
    let (c, e) = report(&["--confirmations", "2"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(std::fs::read(&feed_path).unwrap(), feed_before, "nothing new to write");

    // Two blocks later all three are buried: a plain report adds the two rows, with the
    // provider and model the journal recorded for them (the keeper never wrote them).
    for _ in 0..2 {
        w.advance(1).await.unwrap();
    }
    let (c, e) = report(&["--confirmations", "2"]);
    assert_eq!(c, 0, "{e}");
    let rows = keeper::record::feed::read_feed(&feed_path).unwrap();
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 3, "the two newly buried decisions were added");
    assert!(std::fs::read(&feed_path).unwrap().starts_with(&feed_before), "by appending");
    for d in &ds {
        let labelled = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
        let (p, m) = (&d.note.provider, &d.note.model);
        assert!(labelled(p) && labelled(m), "row {} lost its labels: {p:?} {m:?}", d.tx);
    }
    let (c, e) = report(&["--check", "--confirmations", "2"]);
    assert_eq!(c, 0, "and the record checks: {e}");
    // The keeper resumes on the record report extended, and it still checks.
    let mut k = w.keeper(Some(dir.path().to_path_buf())).confirmations(2).resume().build().unwrap();
    w.advance(1).await.unwrap();
    common::builtin_cycle(&mut k).await;
    drop(k);
    let (c, e) = report(&["--check", "--confirmations", "2"]);
    assert_eq!(c, 0, "after the keeper's next cycle too: {e}");
    w.stop().await;
}
