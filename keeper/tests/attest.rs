//! `keeper attest` against a real anvil, the real compiled gate deployed attested (three
//! attestors, k = 2), and three real attestor processes on loopback, each with its own key and
//! model: two on the builtin rules, one on a replay model that always answers BUY_DOWN. Their
//! EIP-712 signatures, made in Rust, are checked by the contract: two agreeing answers buy, a
//! split is reason 22, a keeper's forgery is reason 21. Each refusal of the attestor (another
//! chain or gate, a read block in the future or too old, a market the gate does not trust, a
//! malformed body) is asked for and named. Adversary: a compromised keeper driving the
//! attestors and choosing what to submit.
// `serial()` is a std Mutex held for a whole test on purpose: the tests run one at a time.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
    signers::local::PrivateKeySigner,
    sol_types::SolEvent,
};
use common::{
    attested, buy_up_market, deploy_beside, root, serial, spawn_listening, world, Drained,
};
use keeper::{
    chain::attestation::{self, Attested, Vote},
    dev::world::{Actor, World},
    kit::bindings::{reason, IRiskGate},
};

/// anvil's dev accounts 6, 7 and 8 attest; the world uses 0 to 3.
const ATTESTOR_ACCOUNTS: [usize; 3] = [6, 7, 8];

struct AttestorProcess {
    _child: tokio::process::Child,
    url: String,
    log: Drained,
}

/// The keeper binary run as `keeper <sub> --rpc-url <w's anvil> --gate <gate>` from the project
/// root, with no `KEEPER_*`, `ATTESTOR_*` or `RUST_LOG` from the test's environment.
fn keeper_command(w: &World, sub: &str, gate: Address) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") || k.starts_with("ATTESTOR_") || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.arg("--root").arg(root()).args([
        sub,
        "--rpc-url",
        w.anvil.url.as_str(),
        "--gate",
        &gate.to_string(),
    ]);
    cmd
}

/// The output of a finished command, stdout then stderr, asserting it succeeded.
fn succeeded(out: std::process::Output, what: &str) -> String {
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

/// The attestor keys (anvil's dev accounts 6 to 8) and their addresses.
/// `keeper run --once` from `from_block` on `gate` as the world's keeper, asking `attestors`,
/// with `extra` flags, writing its record to `results`; its log, once it succeeded.
fn run_once(
    w: &World,
    gate: Address,
    from_block: u64,
    attestors: &[&str],
    extra: &[&str],
    results: &std::path::Path,
) -> String {
    let mut cmd = keeper_command(w, "run", gate);
    cmd.env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap());
    cmd.args(["--once", "--from-block", &from_block.to_string()]);
    for url in attestors {
        cmd.args(["--attestor", url]);
    }
    cmd.args(extra).args(["--results", results.to_str().unwrap()]);
    succeeded(cmd.output().unwrap(), "keeper run")
}

fn attestor_keys(w: &World) -> (Vec<String>, Vec<Address>) {
    let keys: Vec<String> =
        ATTESTOR_ACCOUNTS.iter().map(|&i| w.anvil.dev_key(i).unwrap().to_string()).collect();
    let signers = keys.iter().map(|k| k.parse::<PrivateKeySigner>().unwrap().address()).collect();
    (keys, signers)
}

/// `keeper attest` for `gate` on loopback with a clean environment and the attestor key `key`
/// (none: no key at all).
fn attest_command(w: &World, gate: Address, key: Option<&str>) -> std::process::Command {
    let mut cmd = keeper_command(w, "attest", gate);
    cmd.args(["--listen", "127.0.0.1:0"]);
    if let Some(key) = key {
        cmd.env("ATTESTOR_PRIVATE_KEY", key);
    }
    cmd
}

/// Starts `keeper attest` for `gate` with dev key `key`, `model_args` choosing its model.
async fn start_attestor(
    w: &World,
    gate: Address,
    key: &str,
    model_args: &[&str],
) -> AttestorProcess {
    let mut cmd = attest_command(w, gate, Some(key));
    cmd.args(model_args);
    let (child, url, log) = spawn_listening(cmd.into(), "keeper attest: ").await;
    AttestorProcess { _child: child, url, log }
}

/// POSTs `body` to an attestor; the status and the JSON reply.
async fn post(a: &AttestorProcess, body: serde_json::Value) -> (u16, serde_json::Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/attest", a.url))
        .json(&body)
        .send()
        .await
        .expect("the attestor answers");
    let status = r.status().as_u16();
    (status, r.json().await.expect("a JSON reply"))
}

async fn ask(
    a: &AttestorProcess,
    chain_id: u64,
    gate: Address,
    market: Address,
    read_block: u64,
) -> Attested {
    let (status, body) = post(
        a,
        serde_json::json!({"chainId": chain_id, "gate": gate, "market": market, "readBlock": read_block}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", a.log.text());
    serde_json::from_value(body).expect("an Attested")
}

/// Sends `submitAttested` with `answers` (sorted by signer, as the gate wants them) from the
/// keeper; the Decision it published.
async fn submit(w: &World, gate: Address, answers: &[&Attested]) -> IRiskGate::Decision {
    let mut answers = answers.to_vec();
    answers.sort_by_key(|a| a.signer);
    let first = answers[0];
    let raws: Vec<String> = answers.iter().map(|a| a.raw.clone()).collect();
    let sigs: Vec<Bytes> = answers.iter().map(|a| a.signature.clone()).collect();
    // The keeper's quote bounds nothing here (the attested limit does); its deadline is the
    // one the attestors signed.
    let quote = IRiskGate::Quote { maxPricePaid: U256::MAX, deadline: first.deadline };
    let data = attestation::submit_calldata(
        first.market,
        first.read_block,
        &raws,
        &sigs,
        quote,
        &first.read,
    );
    let tx = TransactionRequest::default().with_to(gate).with_input(data);
    let receipt = w.keeper_rpc.send_transaction(tx).await.unwrap().get_receipt().await.unwrap();
    assert!(receipt.status(), "submitAttested reverted");
    receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| IRiskGate::Decision::decode_log(&l.inner).ok())
        .expect("one Decision")
        .data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attestors_sign_what_they_read_and_the_gate_counts_k_of_n() {
    let _g = serial();
    let w = world(&[]).await;
    let chain_id = w.deployment.chain_id;
    let (keys, signers) = attestor_keys(&w);
    let gate = deploy_beside(&w, attested(signers, 2)).await.gate;
    w.mint(gate, U256::from(100_000_000u64)).await.unwrap();

    // Two attestors on the builtin rules, one on a model that always says BUY_DOWN.
    let replay = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(replay.path(), "\"BUY_DOWN\"\n".repeat(16)).unwrap();
    let replay_path = replay.path().to_str().unwrap().to_string();
    let a = start_attestor(&w, gate, &keys[0], &["--model", "builtin"]).await;
    let b = start_attestor(&w, gate, &keys[1], &["--model", "builtin"]).await;
    let c =
        start_attestor(&w, gate, &keys[2], &["--model", "replay", "--replay-file", &replay_path])
            .await;

    // A market with one ask at 0.40: the builtin rules buy UP.
    let market = buy_up_market(&w).await;
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let (ra, rb, rc) = tokio::join!(
        ask(&a, chain_id, gate, market, head),
        ask(&b, chain_id, gate, market, head),
        ask(&c, chain_id, gate, market, head)
    );
    for r in [&ra, &rb, &rc] {
        assert!(r.verifies(), "{r:?}");
        // Every attestor read the same book and rendered the same prompt.
        assert_eq!(r.read, ra.read);
        assert_eq!(r.deadline, ra.deadline);
    }
    assert_eq!(ra.read.best_ask, U256::from(400_000u64));
    assert_eq!(
        (ra.raw.as_str(), rb.raw.as_str(), rc.raw.as_str()),
        ("BUY_UP", "BUY_UP", "BUY_DOWN")
    );

    // A compromised keeper signs attestor C's BUY_DOWN over with its own key: 21.
    let keeper_key: PrivateKeySigner = w.anvil.dev_key(0).unwrap().parse().unwrap();
    let mut forged = rc.clone();
    forged.raw = "BUY_UP".into();
    forged.signature = attestation::sign(&keeper_key, chain_id, gate, &forged.answer()).unwrap();
    forged.signer = keeper_key.address();
    let d = submit(&w, gate, &[&ra, &forged]).await;
    assert_eq!(d.reason, reason::NOT_ATTESTED, "a forged second signature");

    // A and C disagree: 22, nothing bought; the read block is then used.
    let d = submit(&w, gate, &[&ra, &rc]).await;
    assert_eq!(d.reason, reason::ATTESTORS_DISAGREE);
    let vote = Vote::decode(&d.vote).unwrap().unwrap();
    assert_eq!(vote.counts, [0, 1, 1, 0]);
    let d = submit(&w, gate, &[&ra, &rb]).await;
    assert_eq!(d.reason, reason::NOT_ATTESTED, "the same read again, even with agreeing answers");

    // A fresh read: A and B agree on BUY_UP; the gate buys at the attested 0.40 ask.
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let (ra, rb) =
        tokio::join!(ask(&a, chain_id, gate, market, head), ask(&b, chain_id, gate, market, head));
    let d = submit(&w, gate, &[&ra, &rb]).await;
    assert_eq!(d.reason, reason::PASS, "{d:?}");
    assert_eq!(d.promptHash, ra.read.prompt_hash);
    let vote = Vote::decode(&d.vote).unwrap().unwrap();
    assert_eq!(vote.counts, [0, 2, 0, 0]);
    let mut want = vec![ra.signer, rb.signer];
    want.sort();
    assert_eq!(vote.entries.iter().map(|e| e.signer).collect::<Vec<_>>(), want);
    let g = IRiskGate::new(gate, &w.keeper_rpc);
    let pos = g.positionOf(market).call().await.unwrap();
    assert!(pos.upUnits > U256::ZERO, "bought UP");

    // `keeper report` rebuilds the record of these four decisions from chain, and `--check`
    // re-verifies every vote from logs and call data: 8 signatures, 21 (forged), 22, 21
    // (replayed read), PASS, each reason following from what was signed.
    let results = tempfile::tempdir().unwrap();
    let report = |check: bool| {
        let mut cmd = keeper_command(&w, "report", gate);
        cmd.args(["--results", results.path().to_str().unwrap()]);
        if check {
            cmd.arg("--check");
        }
        succeeded(cmd.output().unwrap(), "keeper report")
    };
    report(false);
    let checked = report(true);
    assert!(checked.contains("4 attested decisions' votes, 8 signatures recovered"), "{checked}");
    // The checker is not a rubber stamp: the PASS row against its own call with one answer
    // changed, or with the signatures swapped, is named.
    let rows = keeper::record::feed::read_feed_for(
        &results.path().join(keeper::record::FEED_FILE),
        chain_id,
        gate,
    )
    .unwrap();
    let pass = common::decisions(&rows).into_iter().find(|d| d.reason == reason::PASS).unwrap();
    let tx = w.keeper_rpc.get_transaction_by_hash(pass.tx.parse().unwrap()).await.unwrap().unwrap();
    let input = {
        use alloy::consensus::Transaction as _;
        tx.inner.input().clone()
    };
    let call = keeper::record::votes::decode_call(&input, 0).unwrap();
    // A single call publishes one decision: a row claiming to be its second is named.
    let second = keeper::record::votes::decode_call(&input, 1).unwrap_err();
    assert!(second.contains("publishes one decision"), "{second}");
    let set = keeper::chain::attestor_set(&w.keeper_rpc, gate).await.unwrap().expect("attested");
    assert_ne!(set.set, Address::ZERO);
    let mut n = 0;
    let honest = keeper::record::votes::check_one(pass, &call, chain_id, gate, &set, false, &mut n);
    assert!(honest.is_empty(), "{honest:?}");
    let mut changed = call.clone();
    changed.raws[1] = "BUY_DOWN".into();
    let found =
        keeper::record::votes::check_one(pass, &changed, chain_id, gate, &set, false, &mut n);
    assert!(found.iter().any(|p| p.contains("answer 2's length, hash or head")), "{found:?}");
    assert!(found.iter().any(|p| p.contains("answer 2's signature recovers to")), "{found:?}");
    let mut swapped = call.clone();
    swapped.sigs.swap(0, 1);
    let found =
        keeper::record::votes::check_one(pass, &swapped, chain_id, gate, &set, false, &mut n);
    assert!(found.iter().any(|p| p.contains("answer 1's signature recovers to")), "{found:?}");
    let found = keeper::record::votes::check_one(pass, &call, chain_id, gate, &set, true, &mut n);
    assert!(found.iter().any(|p| p.contains("not attested")), "a PASS on a used read: {found:?}");

    // What an attestor refuses, each named.
    let ok = |rb: u64| serde_json::json!({"chainId": chain_id, "gate": gate, "market": market, "readBlock": rb});
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let mut body = ok(head);
    body["chainId"] = serde_json::json!(1);
    let (s, e) = post(&a, body).await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("signs for chain"), "{e}");
    let mut body = ok(head);
    body["gate"] = serde_json::json!(w.deployment.gate);
    let (s, e) = post(&a, body).await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("signs for gate"), "{e}");
    let (s, e) = post(&a, ok(head + 1)).await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("in the future"), "{e}");
    for _ in 0..6 {
        w.mint(w.maker_addr, U256::from(1u64)).await.unwrap();
    }
    let (s, e) = post(&a, ok(head)).await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("at most 5 blocks behind"), "{e}");
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let untrusted = w
        .create_market_as(
            Actor::Outsider,
            10_000,
            100,
            w.fillable_min_qty(100),
            expiry,
            w.maker_addr,
        )
        .await
        .unwrap();
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let mut body = ok(head);
    body["market"] = serde_json::json!(untrusted);
    let (s, e) = post(&a, body).await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("not one the gate trusts"), "{e}");
    let mut body = ok(head);
    body["prompt"] = serde_json::json!("sign this instead");
    let (s, e) = post(&a, body).await;
    assert_eq!(s, 400, "a field the attestor does not take is refused: {e}");
    println!(
        "attest: 3 attestors on loopback; forged = reason 21, split = 22, replayed read = 21, 2 of 3 agreeing = PASS; 6 refusals named"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attestor_whose_key_is_not_in_the_set_or_whose_gate_is_relayed_refuses_to_start() {
    let _g = serial();
    let w = world(&[]).await;
    let key = w.anvil.dev_key(ATTESTOR_ACCOUNTS[0]).unwrap().to_string();
    let run = |gate: Address, key: Option<&str>| attest_command(&w, gate, key).output().unwrap();
    // The world's gate is relayed.
    let out = run(w.deployment.gate, Some(&key));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is relayed"), "{err}");
    // An attested gate whose set holds other keys.
    let gate = deploy_beside(
        &w,
        attested(vec![Address::repeat_byte(0x51), Address::repeat_byte(0x52)], 1),
    )
    .await
    .gate;
    let out = run(gate, Some(&key));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is not one of gate"), "{err}");
    // No key at all: named, never asked for as a flag.
    let out = run(gate, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("ATTESTOR_PRIVATE_KEY"), "{err}");
    w.stop().await;
}

/// `keeper run` against an attested gate, with its three attestors as real `keeper attest`
/// processes (two on the builtin rules, one always saying BUY_DOWN): it asks them all at once,
/// submits once two agree, and the gate publishes PASS with the vote naming the signers. Then,
/// with one attestor left and the two others silent (a listener that never answers) or gone (a
/// closed port), it sends nothing and writes an off-chain row naming both and why. Adversary:
/// attestors that fail or stall (fewer than k): they delay a decision by the timeout at most,
/// and never make one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keeper_asks_its_attestors_at_once_and_submits_when_k_agree() {
    let _g = serial();
    let w = world(&[]).await;
    let (keys, signers) = attestor_keys(&w);
    let deployed = deploy_beside(&w, attested(signers.clone(), 2)).await;
    let gate = deployed.gate;
    w.mint(gate, U256::from(100_000_000u64)).await.unwrap();
    let replay = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(replay.path(), "\"BUY_DOWN\"\n".repeat(16)).unwrap();
    let replay_path = replay.path().to_str().unwrap().to_string();
    let a = start_attestor(&w, gate, &keys[0], &["--model", "builtin"]).await;
    let b = start_attestor(&w, gate, &keys[1], &["--model", "builtin"]).await;
    let c =
        start_attestor(&w, gate, &keys[2], &["--model", "replay", "--replay-file", &replay_path])
            .await;
    let dir = tempfile::tempdir().unwrap();
    // The timeout only ever decides for the attestor that never answers; one that answers does
    // so in milliseconds, far inside it even on a loaded machine.
    let run_once = |attestors: &[&str], timeout_secs: &str, extra: &[&str]| {
        let mut flags = vec!["--attestor-timeout-secs", timeout_secs];
        flags.extend_from_slice(extra);
        run_once(&w, gate, deployed.deploy_block, attestors, &flags, dir.path())
    };

    // All three up: the two builtin attestors agree on BUY_UP at the 0.40 ask.
    let market = buy_up_market(&w).await;
    let log = run_once(&[&a.url, &b.url, &c.url], "60", &[]);
    let rows = common::record_rows(dir.path());
    let decided = common::decisions(&rows);
    assert_eq!(decided.len(), 1, "{log}");
    let d = decided[0];
    assert_eq!(d.reason, reason::PASS, "{d:?}\n{log}");
    assert_eq!(d.market, market.to_checksum(None));
    // The vote, from the gate's own log: at least the two agreeing signers, ascending; the
    // BUY_DOWN attestor is in it only if it answered before the second BUY_UP.
    let logs = w
        .keeper_rpc
        .get_logs(
            &alloy::rpc::types::Filter::new()
                .address(gate)
                .event_signature(IRiskGate::Decision::SIGNATURE_HASH)
                .from_block(deployed.deploy_block),
        )
        .await
        .unwrap();
    assert_eq!(logs.len(), 1);
    let event = IRiskGate::Decision::decode_log(&logs[0].inner).unwrap().data;
    let vote = Vote::decode(&event.vote).unwrap().unwrap();
    assert_eq!(vote.counts[1], 2, "two BUY_UP: {vote:?}");
    assert!(vote.counts[2] <= 1 && vote.counts[0] == 0 && vote.counts[3] == 0, "{vote:?}");
    let got: Vec<Address> = vote.entries.iter().map(|e| e.signer).collect();
    assert!(got.windows(2).all(|p| p[0] < p[1]), "ascending: {got:?}");
    assert!(got.iter().all(|s| signers.contains(s)), "{got:?}");
    let pos = IRiskGate::new(gate, &w.keeper_rpc).positionOf(market).call().await.unwrap();
    assert!(pos.upUnits > U256::ZERO, "bought UP");
    // RESULTS.md names the mode and the attestors, and shows the row's vote.
    let page = std::fs::read_to_string(dir.path().join(keeper::record::RESULTS_FILE)).unwrap();
    assert!(
        page.contains("| mode | attested: an answer counts only when 2 of these 3 attestors"),
        "{page}"
    );
    let short = format!("`{}`", &market.to_checksum(None)[..10]);
    let row = page.lines().find(|l| l.contains(&short) && l.contains("| #")).unwrap();
    assert!(row.contains("BUY_UP 2"), "{row}");
    for e in &vote.entries {
        assert!(row.contains(&e.signer.to_checksum(None)[..10]), "{row}");
    }

    // --attestor-wait-all: the keeper waits for all three, so the vote holds every answer,
    // whoever was first: BUY_UP 2 (the builtin pair), BUY_DOWN 1 (the replay), PASS.
    let third = buy_up_market(&w).await;
    let log = run_once(&[&a.url, &b.url, &c.url], "60", &["--attestor-wait-all"]);
    let rows = common::record_rows(dir.path());
    let d = common::decisions(&rows)
        .into_iter()
        .find(|d| d.market == third.to_checksum(None))
        .unwrap_or_else(|| panic!("a decision on the third market\n{log}"));
    assert_eq!(d.reason, reason::PASS, "{d:?}\n{log}");
    let all = d.vote.as_ref().expect("an attested row carries its vote");
    let n = all.counts;
    assert_eq!(
        (n.abstain, n.buy_up, n.buy_down, n.unparseable),
        (0, 2, 1, 0),
        "every answer in the vote: {all:?}"
    );
    let mut ascending = signers.clone();
    ascending.sort();
    let named: Vec<String> = all.answers.iter().map(|e| e.signer.clone()).collect();
    let want: Vec<String> = ascending.iter().map(|s| s.to_checksum(None)).collect();
    assert_eq!(named, want, "all three signers, ascending");

    // One attestor left: B silent (a listener that accepts nothing), C gone (a closed port).
    drop(b);
    drop(c);
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone_url = format!("http://{}", gone.local_addr().unwrap());
    drop(gone);
    let second = buy_up_market(&w).await;
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let log = run_once(&[&a.url, &silent_url, &gone_url], "10", &[]);
    assert_eq!(
        w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(),
        nonce,
        "nothing is sent with fewer than k answers: {log}"
    );
    let rows = common::record_rows(dir.path());
    let off = common::offchain(&rows);
    let row = off
        .iter()
        .find(|r| r.market == second.to_checksum(None))
        .unwrap_or_else(|| panic!("an off-chain row for the second market: {rows:?}\n{log}"));
    assert!(
        row.error.contains("1 usable attested answer(s) over one read, 2 needed"),
        "{}",
        row.error
    );
    assert!(row.error.contains(&format!("{silent_url} (no answer within 10 s)")), "{}", row.error);
    assert!(row.error.contains(&format!("{gone_url} (unreachable")), "{}", row.error);
    assert!(!row.error.contains(&a.url), "the attestor that answered is not named: {}", row.error);
    assert_eq!(common::decisions(&rows).len(), 2, "no decision on the second market");
    // The keeper's record, checked from chain: the vote from call data, and the prompt the
    // attestors signed re-rendered from the market's logs at the read block.
    let out = keeper_command(&w, "report", gate)
        .args(["--check", "--check-prompts", "--from-block", &deployed.deploy_block.to_string()])
        .args(["--results", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let text = succeeded(out, "keeper report --check --check-prompts");
    assert!(text.contains("2 attested decisions' votes"), "{text}");
    assert!(text.contains("2 of 2 decisions' prompts re-render"), "{text}");
    println!(
        "keeper run + 3 attestors: PASS with vote {:?}; 1 of 3 answering: nothing sent, row: {}",
        vote.counts, row.error
    );
    drop(silent);
    w.stop().await;
}

/// anvil mines a block per transaction, so with many answers in flight a read ages a block per
/// submission sent after it; the gate takes reads at most 5 blocks old. Each of 12 markets is
/// either decided or has an off-chain row saying its read got too old (refused by the
/// attestors, or held back by the keeper: it never sends a read the head already makes too old
/// for the next block). Submissions are pipelined, so one sent while earlier ones were still
/// being mined can land a block or two later than the keeper saw: the gate then publishes 21,
/// and only ever for that (its block more than 5 past its read). Adversary: a slow round of
/// asks on a busy chain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_too_old_to_count_is_never_sent() {
    let _g = serial();
    let w = world(&[]).await;
    let (keys, signers) = attestor_keys(&w);
    let deployed = deploy_beside(&w, attested(signers, 2)).await;
    let gate = deployed.gate;
    w.mint(gate, U256::from(1_000_000_000u64)).await.unwrap();
    let a = start_attestor(&w, gate, &keys[0], &["--model", "builtin"]).await;
    let b = start_attestor(&w, gate, &keys[1], &["--model", "builtin"]).await;
    let mut markets = Vec::new();
    for _ in 0..12 {
        markets.push(buy_up_market(&w).await);
    }
    let dir = tempfile::tempdir().unwrap();
    let log = run_once(&w, gate, deployed.deploy_block, &[&a.url, &b.url], &[], dir.path());
    let rows = common::record_rows(dir.path());
    let decided = common::decisions(&rows);
    let brief: Vec<String> = decided
        .iter()
        .map(|d| {
            format!(
                "block {} read {} reason {} vote {:?}",
                d.block,
                d.read_block,
                d.reason,
                d.vote.as_ref().map(|v| v.counts)
            )
        })
        .collect();
    assert!(
        decided.iter().all(|d| d.reason != reason::NOT_ATTESTED || d.block > d.read_block + 5),
        "a 21 other than a read that aged in flight: {brief:#?}"
    );
    let off = common::offchain(&rows);
    for m in &markets {
        let name = m.to_checksum(None);
        let d = decided.iter().any(|d| d.market == name);
        let stale = off.iter().any(|r| {
            r.market == name
                && (r.error.contains("blocks old in the next block")
                    || r.error.contains("blocks old: the gate accepts reads at most 5"))
        });
        assert!(d ^ stale, "market {name}: decided {d}, stale row {stale}: {rows:?}\n{log}");
    }
    println!(
        "12 markets, 5-block read window: {} decided ({} of them 21, aged in flight), {} held back as stale",
        decided.len(),
        decided.iter().filter(|d| d.reason == reason::NOT_ATTESTED).count(),
        12 - decided.len()
    );
    w.stop().await;
}

/// An attested cycle's answers go out as one `submitAttestedVerdicts` batch (the window set past
/// the cycle, so the grouping never depends on timing): three markets, one transaction, three
/// decisions, and `report --check` re-verifies each vote from its own element of the batch,
/// found by the decision's position in the transaction. Adversary: a keeper or feed publisher
/// claiming a vote the attestors never gave, now inside a batch (a position past the batch, or a
/// single call read as a batch, is named, not skipped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attested_cycle_goes_out_as_one_batch_and_every_vote_checks() {
    use alloy::sol_types::SolCall;
    let _g = serial();
    let w = world(&[]).await;
    let (keys, signers) = attestor_keys(&w);
    let deployed = deploy_beside(&w, attested(signers, 2)).await;
    let gate = deployed.gate;
    w.mint(gate, U256::from(100_000_000u64)).await.unwrap();
    let a = start_attestor(&w, gate, &keys[0], &["--model", "builtin"]).await;
    let b = start_attestor(&w, gate, &keys[1], &["--model", "builtin"]).await;
    let mut markets = Vec::new();
    for _ in 0..3 {
        markets.push(buy_up_market(&w).await);
    }
    let dir = tempfile::tempdir().unwrap();
    let window = ["--batch-window-ms", "600000"];
    let log = run_once(&w, gate, deployed.deploy_block, &[&a.url, &b.url], &window, dir.path());
    let rows = common::record_rows(dir.path());
    let decided = common::decisions(&rows);
    assert_eq!(decided.len(), 3, "{rows:?}\n{log}");
    let txs: std::collections::BTreeSet<&str> = decided.iter().map(|d| d.tx.as_str()).collect();
    assert_eq!(txs.len(), 1, "one transaction for the cycle: {txs:?}");
    for d in &decided {
        // Both builtin attestors answer BUY_UP at the 0.40 ask: each decision passes.
        assert_eq!(d.reason, reason::PASS, "{d:?}\n{log}");
        assert!(markets.iter().any(|m| m.to_checksum(None) == d.market), "{d:?}");
    }
    let tx = w
        .keeper_rpc
        .get_transaction_by_hash(decided[0].tx.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let input = {
        use alloy::consensus::Transaction as _;
        tx.inner.input().clone()
    };
    assert_eq!(input[..4], IRiskGate::submitAttestedVerdictsCall::SELECTOR, "a batch");
    // Each position decodes to its own market, in the transaction's order; none past the end.
    let mut in_order: Vec<_> = decided.clone();
    in_order.sort_by_key(|d| d.log_index);
    for (i, d) in in_order.iter().enumerate() {
        let call = keeper::record::votes::decode_call(&input, i).unwrap();
        assert_eq!(call.market.to_checksum(None), d.market, "element {i}");
    }
    let past = keeper::record::votes::decode_call(&input, 3).unwrap_err();
    assert!(past.contains("its batch has 3 elements"), "{past}");
    let out = keeper_command(&w, "report", gate)
        .args(["--check", "--check-prompts", "--from-block", &deployed.deploy_block.to_string()])
        .args(["--results", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let text = succeeded(out, "keeper report --check --check-prompts");
    assert!(text.contains("3 attested decisions' votes, 6 signatures recovered"), "{text}");
    assert!(text.contains("3 of 3 decisions' prompts re-render"), "{text}");
    println!("3 attested answers in one submitAttestedVerdicts transaction; {text}");
    w.stop().await;
}

/// A chain that mines on demand and has been quiet for longer than the answers' lifetime (60 s):
/// the next block is stamped far past the read block's time. Attestors used to sign the read
/// block's time + 60 as the deadline, so every answer expired before it was sent, every cycle,
/// until something else mined. Now they count from the keeper's `sendTime` (the node's pending
/// timestamp when it read), which each checks against its own node, and the cycle trades.
/// The quiet spell is set exactly: `evm_setNextBlockTimestamp(head + 600)` without mining makes
/// the node's pending block (and the next mined one) carry that time, as a node that mines on
/// demand does after 600 s of silence; no wall clock decides anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_chain_that_mines_on_demand_still_trades_attested() {
    let _g = serial();
    let w = world(&[]).await;
    let (keys, signers) = attestor_keys(&w);
    let deployed = deploy_beside(&w, attested(signers, 2)).await;
    let gate = deployed.gate;
    w.mint(gate, U256::from(1_000_000_000u64)).await.unwrap();
    let a = start_attestor(&w, gate, &keys[0], &["--model", "builtin"]).await;
    let b = start_attestor(&w, gate, &keys[1], &["--model", "builtin"]).await;
    let mut markets = Vec::new();
    for _ in 0..3 {
        markets.push(buy_up_market(&w).await);
    }
    let head = w.chain_time().await.unwrap();
    // 600 s of silence: ten times the attestors' default answer lifetime (60 s).
    let quiet = head + 600;
    let _: serde_json::Value =
        w.keeper_rpc.raw_request("evm_setNextBlockTimestamp".into(), (quiet,)).await.unwrap();
    let pending: serde_json::Value =
        w.keeper_rpc.raw_request("eth_getBlockByNumber".into(), ("pending", false)).await.unwrap();
    let pending_time =
        u64::from_str_radix(pending["timestamp"].as_str().unwrap().trim_start_matches("0x"), 16)
            .unwrap();
    assert_eq!(pending_time, quiet, "the node's pending block carries the quiet spell's time");

    let dir = tempfile::tempdir().unwrap();
    let log = run_once(&w, gate, deployed.deploy_block, &[&a.url, &b.url], &[], dir.path());
    let rows = common::record_rows(dir.path());
    let decided = common::decisions(&rows);
    let off = common::offchain(&rows);
    assert!(
        off.iter().all(|r| !r.error.contains("expired")),
        "an answer expired before it could be sent: {off:#?}\n{log}"
    );
    for m in &markets {
        let name = m.to_checksum(None);
        let d = decided.iter().find(|d| d.market == name);
        let d = d.unwrap_or_else(|| panic!("market {name} has no decision: {rows:#?}\n{log}"));
        // Read at the head (time `head`), sent in a block stamped `quiet` = head + 600: the
        // deadline signed is quiet + 60, not head + 60.
        assert_eq!(d.reason, reason::PASS, "{d:#?}");
        assert!(d.time >= quiet, "{d:#?}");
    }
    println!(
        "quiet chain, next block {} s after the read: {} of 3 markets decided, none expired",
        quiet - head,
        decided.len()
    );
    w.stop().await;
}

/// The attestor's venue-log cache (it replayed a market's logs since creation on every
/// request): what it returns is what a fresh read from creation returns, before and after new
/// orders, and it keeps at most the markets it was sized for, the one read longest ago dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attestors_venue_log_cache_reads_what_a_full_read_does_and_stays_bounded() {
    use keeper::record::rederive::VenueLogCache;
    let _g = serial();
    let w = world(&[]).await;
    let first = buy_up_market(&w).await;
    let created = w.keeper_rpc.get_block_number().await.unwrap().saturating_sub(1);
    let second = buy_up_market(&w).await;
    // Depth 0: every block up to the head counts as settled; room for one market.
    let cache = VenueLogCache::new(0, 1);
    let ids = |logs: &[alloy::rpc::types::Log]| -> Vec<(u64, u64)> {
        logs.iter().map(|l| (l.block_number.unwrap(), l.log_index.unwrap())).collect()
    };
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let a = cache.logs(&w.keeper_rpc, first, 0, head, head, 10_000).await.unwrap();
    assert!(!a.is_empty(), "the market's order is a venue log");
    assert_eq!(cache.len(), 1);
    // A new order, then the same market again: the kept part plus the new blocks only.
    w.ask(first, 450_000, 20_000_000).await.unwrap();
    let head = w.keeper_rpc.get_block_number().await.unwrap();
    let b = cache.logs(&w.keeper_rpc, first, 0, head, head, 10_000).await.unwrap();
    // A full read: a new cache, so everything from creation is read from the node.
    let full =
        VenueLogCache::new(0, 1).logs(&w.keeper_rpc, first, 0, head, head, 10_000).await.unwrap();
    assert_eq!(ids(&b), ids(&full), "cached + new = a full read");
    assert_eq!(b.len(), a.len() + 1, "one more order");
    // A read at an older block than the kept part: only the logs up to it count in its book
    // (book_at stops at the read block), and nothing is lost.
    let old = cache.logs(&w.keeper_rpc, first, 0, created, head, 10_000).await.unwrap();
    let old_full = VenueLogCache::new(0, 1)
        .logs(&w.keeper_rpc, first, 0, created, head, 10_000)
        .await
        .unwrap();
    assert_eq!(ids(&old), ids(&old_full), "an older read sees only its own blocks");
    assert!(old.iter().all(|l| l.block_number.unwrap() <= created));
    // A second market pushes the first out: one market kept.
    cache.logs(&w.keeper_rpc, second, 0, head, head, 10_000).await.unwrap();
    assert_eq!(cache.len(), 1);
    w.stop().await;
}
